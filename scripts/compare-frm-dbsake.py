#!/usr/bin/env python3
# Compares dbsake's frm parser (github.com/abg/dbsake, checked with 48e6d42) with
# `dbio innodb frm --type-codes` on .frm files: column names, types (MYSQL_TYPE_* codes too),
# NULL-ability, keys, engine and ROW_FORMAT; DEFAULT values and comments are left out (dbio
# does not print defaults).
#
#   DBSAKE=/path/to/dbsake-checkout scripts/compare-frm-dbsake.py target/debug/dbio FILE.frm...
import os, sys, re, subprocess
sys.path.insert(0, os.environ.get('DBSAKE', '/tmp/frm-dbsake'))
from dbsake.core.mysql.frm import binaryfrm
DBIO = sys.argv[1]
ok = bad = err = 0
def norm_type(t):
    t = t.lower()
    t = re.sub(r" default (('([^'\\]|\\.|'')*')|[^ ,]+)( on update current_timestamp)?", "", t)
    t = re.sub(r" on update current_timestamp", "", t)
    t = re.sub(r" comment '.*'$", "", t)
    t = t.replace(" auto_increment", "").replace(" /* 5.5 binary format */", "")
    t = t.replace(" null", "") if not t.endswith("not null") else t
    return t.strip()
def norm_key(k):
    k = re.sub(r" USING BTREE| COMMENT '.*'| KEY_BLOCK_SIZE=\d+| /\*!50100 WITH PARSER `[^`]*` \*/ ?", "", k)
    return k.strip()
for path in sys.argv[2:]:
    try:
        t = binaryfrm.parse(path)
    except Exception as e:
        ds = ("dbsake error", type(e).__name__)
    else:
        if t.type != 'TABLE':
            ds = ("dbsake", "view")
        else:
            cols = [(c.name, norm_type(c.type_name), c.type_code.name) for c in t.columns]
            keys = [norm_key(k.format()) for k in t.keys]
            ds = (cols, keys, t.options.engine, t.options.row_format.name)
    r = subprocess.run([DBIO, 'innodb', 'frm', '--type-codes', path], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{path}: dbio refuses ({r.stderr.strip().splitlines()[-1][:150]}); dbsake: {'parsed' if isinstance(ds[0], list) else ds}")
        err += 1
        continue
    out = r.stdout
    codes = dict(x.strip().split(' MYSQL_TYPE_') for x in out.splitlines()[1][len('-- column types:'):].strip(' ;').split(';'))
    body = out[out.index('CREATE TABLE'):].strip()
    lines = body.splitlines()[1:-1]
    mycols, mykeys = [], []
    for l in lines:
        l = l.strip().rstrip(',')
        m = re.match(r"`((?:[^`]|``)*)` (.*)$", l)
        if m and not l.startswith(('PRIMARY', 'UNIQUE', 'KEY', 'FULLTEXT', 'SPATIAL')):
            mycols.append((m.group(1), norm_type(m.group(2)), codes[m.group(1)]))
        else:
            mykeys.append(norm_key(l))
    tail = body.splitlines()[-1]
    eng = re.search(r"ENGINE=(\S+)", tail).group(1)
    rf = (re.search(r"ROW_FORMAT=(\S+?);?$", tail) or [None, 'DEFAULT'])[1]
    mine = (mycols, mykeys, eng, rf)
    if mine == ds:
        ok += 1
    else:
        bad += 1
        print(f"{path}: DIFFERENT")
        for a, b in zip(mine, ds):
            if a != b:
                print("   dbio  :", a); print("   dbsake:", b)
print(f"same: {ok}, different: {bad}, refused by dbio: {err}")
