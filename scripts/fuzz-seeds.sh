#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets in fuzz/corpus/TARGET/ (not committed: the
# directory is in fuzz/.gitignore) from the real fixtures in testdata/, small disk images made
# with the real tools (sfdisk, mkfs.xfs, mkfs.ext4, pvcreate on a loop device when root) and
# this machine's own /proc and /sys files. Safe to run again: it only adds files.
#
# Usage: scripts/fuzz-seeds.sh
set -euo pipefail
cd "$(dirname "$0")/.."
C=fuzz/corpus
T=testdata
tmp=$(mktemp -d)
loop=""
cleanup() {
  if [ -n "$loop" ]; then losetup -d "$loop" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

seed_dir() { mkdir -p "$C/$1"; }
# copy TARGET FILE...: the files as they are.
copy() {
  local t=$1
  shift
  seed_dir "$t"
  local f
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$C/$t/$(basename "$f")"
  done
  return 0
}
# prefixed TARGET BYTE NAME FILE: the file with one selector byte (octal escape) in front.
prefixed() {
  seed_dir "$1"
  { printf "$2"; cat "$4"; } >"$C/$1/$3"
}
# text TARGET NAME FORMAT [ARG...]: a seed made by printf.
text() {
  seed_dir "$1"
  printf "$3" "${@:4}" >"$C/$1/$2"
}

# diskstats and replay: every saved-sample fixture, and this machine's /proc/diskstats.
copy diskstats $T/diskstats/*
copy diskstats_replay $T/diskstats/*
[ -r /proc/diskstats ] && cp /proc/diskstats $C/diskstats/proc-diskstats
# Counters at the edge of u64 (a damaged or hand-edited saved sample).
max=18446744073709551615
text diskstats_replay max-counters 'TS 1.0\n 8 0 sda 1 0 0 4294967295 0 0 0 0 0 0 0\nTS 2.0\n 8 0 sda %s 1 0 %s 0 0 0 0 0 0 0\n' $max $max

# mountinfo and swaps of this machine.
seed_dir mounts
cp /proc/self/mountinfo $C/mounts/mountinfo
[ -r /proc/swaps ] && cp /proc/swaps $C/mounts/swaps
text mounts escaped '36 35 98:0 / /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n'

# sysfs attributes and tool text.
seed_dir sysfs_attrs
for b in /sys/block/*; do
  n=$(basename "$b")
  [ -r "$b/queue/scheduler" ] && cp "$b/queue/scheduler" "$C/sysfs_attrs/$n-scheduler"
  [ -r "$b/uevent" ] && cp "$b/uevent" "$C/sysfs_attrs/$n-uevent"
  [ -r "$b/dev" ] && cp "$b/dev" "$C/sysfs_attrs/$n-dev"
done
uname -r >$C/sysfs_attrs/uname-r
text sysfs_attrs lvs '  vg0|data|owi-aos---||||\n  vg0|data_snap|swi-a-s---|data|45.31|\n  vg0|thin|Vwi-a-tz--||||12.50\n'
text sysfs_attrs dm-name 'vg--data-lv--mysql'

# RAID tool output, by tool.
copy raid_megacli $T/raid/megacli-*
copy raid_storcli $T/raid/storcli-*.txt $T/raid/perccli-*
copy raid_storcli_json $T/raid/storcli-*.json
copy raid_ssacli $T/raid/ssacli-* $T/raid/hpacucli-*
copy raid_cciss $T/raid/cciss_vol_status-*
copy raid_arcconf $T/raid/arcconf-*
copy raid_twcli $T/raid/tw_cli-*
copy raid_omreport $T/raid/omreport-*

# Partition tables: small images made by sfdisk (first byte: the fuzz target's mode; 0 =
# sector size guessed, 4 = GPT CRCs fixed up after mutation, 2 = 4096-byte sectors).
if command -v sfdisk >/dev/null || [ -x /usr/sbin/sfdisk ]; then
  export PATH="$PATH:/usr/sbin:/sbin"
  truncate -s 64K $tmp/mbr.img
  printf 'label: dos\nstart=63, size=20, type=83\nstart=84, type=5\nstart=88, size=10, type=8e\nstart=100, size=20, type=82\n' |
    sfdisk -q $tmp/mbr.img
  truncate -s 64K $tmp/gpt.img
  printf 'label: gpt\nfirst-lba: 34\nstart=40, size=30, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name="data"\nstart=72, size=20, type=E6D6D379-F507-44C2-A23C-238F2A3DF928\n' |
    sfdisk -q $tmp/gpt.img
  prefixed partition_table '\000' mbr $tmp/mbr.img
  prefixed partition_table '\000' gpt $tmp/gpt.img
  prefixed partition_table '\004' gpt-fixcrc $tmp/gpt.img
  # A GPT with 4 KiB sectors needs a loop device with 4 KiB sectors (root).
  truncate -s 128K $tmp/gpt4k.img
  if [ "$(id -u)" = 0 ] && loop=$(losetup -f --show --sector-size 4096 $tmp/gpt4k.img 2>/dev/null); then
    printf 'label: gpt\nfirst-lba: 6\nstart=8, size=16, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n' |
      sfdisk -q --no-reread --no-tell-kernel "$loop"
    losetup -d "$loop"
    loop=""
    prefixed partition_table '\002' gpt4k $tmp/gpt4k.img
    prefixed partition_table '\006' gpt4k-fixcrc $tmp/gpt4k.img
  fi
else
  echo "fuzz-seeds: sfdisk not found; partition_table starts from an empty corpus" >&2
fi

# Superblocks: the first 4 KiB of real filesystems (the probe reads no more).
seed_dir superblock
if command -v mkfs.xfs >/dev/null || [ -x /usr/sbin/mkfs.xfs ]; then
  truncate -s 1G $tmp/xfs.img
  /usr/sbin/mkfs.xfs -q -d su=64k,sw=4 -L dbio $tmp/xfs.img
  head -c 4096 $tmp/xfs.img >$C/superblock/xfs
  rm -f $tmp/xfs.img
fi
if command -v mkfs.ext4 >/dev/null || [ -x /usr/sbin/mkfs.ext4 ]; then
  truncate -s 8M $tmp/ext4.img
  /usr/sbin/mkfs.ext4 -q -F -b 4096 -E stride=16,stripe_width=64,nodiscard -L dbio $tmp/ext4.img
  head -c 4096 $tmp/ext4.img >$C/superblock/ext4
  truncate -s 8M $tmp/ext2.img
  /usr/sbin/mkfs.ext2 -q -F -b 1024 $tmp/ext2.img
  head -c 4096 $tmp/ext2.img >$C/superblock/ext2
fi
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/pvcreate ]; then
  truncate -s 16M $tmp/pv.img
  if loop=$(losetup -f --show $tmp/pv.img 2>/dev/null); then
    if /usr/sbin/pvcreate -q --dataalignment 192k "$loop" >/dev/null 2>&1; then
      head -c 4096 "$loop" >$C/superblock/lvm2-pv
      /usr/sbin/pvremove -q -ff -y "$loop" >/dev/null 2>&1 || true
    fi
    losetup -d "$loop"
    loop=""
  fi
fi

# InnoDB pages: every page of the real tablespaces, one file each, behind the selector byte
# of its size (fuzz target innodb_page: 3 = 8 KiB, 4 = 16 KiB).
seed_dir innodb_page
for f in $T/innodb/*.ibd $T/innodb/ibdata1_16k_head; do
  n=$(basename "$f")
  case "$n" in
  small_pages8*|shop_zipped*|shop_zip8*) size=8192 sel='\003' ;;
  shop_zip4*) size=4096 sel='\002' ;;
  shop_zip1*) size=1024 sel='\000' ;;
  *) size=16384 sel='\004' ;;
  esac
  pages=$(($(stat -c %s "$f") / size))
  for ((i = 0; i < pages; i++)); do
    { printf "$sel"; dd if="$f" bs=$size skip=$i count=1 status=none; } >"$C/innodb_page/$n-$i"
  done
done
# ROW_FORMAT=COMPRESSED: every page of the compressed tablespaces behind the selector byte of
# its size (fuzz target innodb_zip: 0 = 1 KiB, 2 = 4 KiB, 3 = 8 KiB): leaf pages with and
# without a modification log, ZBLOB and ZBLOB2 pages.
seed_dir innodb_zip
for f in $T/innodb/shop_zip*.ibd; do
  n=$(basename "$f")
  case "$n" in
  shop_zip1.ibd) size=1024 sel='\000' ;;
  shop_zip4.ibd) size=4096 sel='\002' ;;
  *) size=8192 sel='\003' ;;
  esac
  pages=$(($(stat -c %s "$f") / size))
  for ((i = 0; i < pages; i++)); do
    { printf "$sel"; dd if="$f" bs=$size skip=$i count=1 status=none; } >"$C/innodb_zip/$n-$i"
  done
done
# InnoDB scan: the first 64 KiB of each tablespace (several pages, page 0 with its flags).
seed_dir innodb_scan
for f in $T/innodb/*.ibd $T/innodb/ibdata1_16k_head; do
  head -c 65536 "$f" >"$C/innodb_scan/$(basename "$f")"
done

# grep patterns as a user types them (first byte: which flag; see fuzz_targets/grep_pattern.rs).
text grep_pattern hex '\000%s' '80 07 ??{22} 80 03'
text grep_pattern hex-packed '\000%s' 'B1EB1F9C'
text grep_pattern int '\062%s' '837492636'
text grep_pattern smallint-list '\022%s' '7,3,7,8'
text grep_pattern bigint-unsigned '\222%s' '18446744073709551615'
text grep_pattern date '\003%s' '2024-02-29'
text grep_pattern datetime '\044%s' '2024-02-29 13:45:10.25'
text grep_pattern timestamp '\145%s\n%s' '+05:30' '2024-02-29 13:45:10.123456'
text grep_pattern time '\006%s' '-838:59:59'
text grep_pattern decimal '\007%s' '10,2:1234.56'
text grep_pattern char '\010%s' '10:abc'
text grep_pattern varchar-latin1 '\051%s' 'caf\303\251'
text grep_pattern tz '\012%s' '-0800'

for d in $C/*; do
  echo "$(basename "$d"): $(ls "$d" | wc -l) seeds, $(du -sk "$d" | cut -f1) KiB"
done
