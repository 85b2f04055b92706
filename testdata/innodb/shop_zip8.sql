CREATE TABLE `zip8` (
  `id` int(11) NOT NULL,
  `ti` tinyint(4) DEFAULT NULL,
  `si` smallint(6) DEFAULT NULL,
  `mi` mediumint(9) DEFAULT NULL,
  `bi` bigint(20) DEFAULT NULL,
  `iu` int(10) unsigned DEFAULT NULL,
  `d` date DEFAULT NULL,
  `dt` datetime DEFAULT NULL,
  `dt6` datetime(6) DEFAULT NULL,
  `ts` timestamp NULL DEFAULT NULL,
  `tm` time DEFAULT NULL,
  `dec1` decimal(10,2) DEFAULT NULL,
  `ch` char(10) DEFAULT NULL,
  `vc` varchar(64) DEFAULT NULL,
  `tx` text DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8
