CREATE TABLE `dropcol` (
  `id` int(11) NOT NULL,
  `n` int(11) DEFAULT NULL,
  `a` varchar(10) DEFAULT NULL,
  `c` char(4) DEFAULT NULL,
  `z` varchar(5) DEFAULT 'zz',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci ROW_FORMAT=DYNAMIC
