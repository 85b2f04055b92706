CREATE TABLE `uc_test` (
  `Настройки` varchar(255) DEFAULT 'Настройки'
) ENGINE=InnoDB DEFAULT CHARSET=koi8r COMMENT='Настройки';
