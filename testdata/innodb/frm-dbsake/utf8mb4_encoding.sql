CREATE TABLE `utf8mb4_encoding` (
  `data` varchar(32) DEFAULT 'foobarbaz'
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
