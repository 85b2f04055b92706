CREATE TABLE `blob_test` (
  `a` tinyblob NOT NULL,
  `b` blob,
  `c` mediumblob,
  `d` longblob,
  `e` tinytext,
  `f` text NOT NULL,
  `g` mediumtext,
  `h` longtext
) ENGINE=InnoDB DEFAULT CHARSET=latin1;
