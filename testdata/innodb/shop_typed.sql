-- The CREATE TABLE that scripts/make-innodb-testdata.sh ran for shop.typed (shop_typed.ibd),
-- with the throwaway server's default charset (latin1) written out.
create table typed (
  id int primary key,
  ti tinyint, si smallint, mi mediumint, bi bigint, iu int unsigned,
  d date, dt datetime, dt6 datetime(6), ts timestamp null, tm time,
  dec1 decimal(10,2), ch char(10), vc varchar(64)
) row_format=dynamic default charset=latin1;
