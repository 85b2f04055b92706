CREATE TABLE `packed_lzo` (
  `id` int(11) NOT NULL,
  `v` varchar(200) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci `page_compressed`='1'
