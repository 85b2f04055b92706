CREATE TABLE `enc_crc32` (
  `id` int(11) NOT NULL,
  `name` varchar(40) NOT NULL,
  `born` date DEFAULT NULL,
  `price` decimal(10,2) DEFAULT NULL,
  `note` text DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci `encrypted`='yes' `encryption_key_id`='2'
