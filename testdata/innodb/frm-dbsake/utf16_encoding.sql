CREATE TABLE `utf16_encoding` (
  `data` varchar(30) DEFAULT 'пример'
) ENGINE=InnoDB DEFAULT CHARSET=utf16;
