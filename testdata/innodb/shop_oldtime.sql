CREATE TABLE `oldtime` (
  `id` int(11) NOT NULL,
  `dt` datetime /* mariadb-5.3 */ DEFAULT NULL,
  `tm` time /* mariadb-5.3 */ DEFAULT NULL,
  `ts` timestamp /* mariadb-5.3 */ NULL DEFAULT NULL,
  `dt3` datetime(3) /* mariadb-5.3 */ DEFAULT NULL,
  `tm2` time(2) /* mariadb-5.3 */ DEFAULT NULL,
  `ts6` timestamp(6) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `dt6` datetime(6) /* mariadb-5.3 */ DEFAULT NULL,
  `tm6` time(6) /* mariadb-5.3 */ DEFAULT NULL,
  `tm5` time(5) /* mariadb-5.3 */ DEFAULT NULL,
  `dt5` datetime(5) /* mariadb-5.3 */ DEFAULT NULL,
  `d` date DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci ROW_FORMAT=DYNAMIC
