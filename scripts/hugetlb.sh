# Sourced by the bench scripts: hugetlb pages for fio --iomem=mmaphuge, fio's only way to put
# its I/O buffers in huge pages (dbio's default, through transparent huge pages). Needs root.
#   hugetlb_reserve N   make sure N hugetlb pages are free (raises vm.nr_hugepages)
#   hugetlb_restore     put vm.nr_hugepages back (call it from the EXIT trap)
HUGETLB_ORIG=
hugetlb_reserve() {
    local want=$1 free got
    free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
    [ "${free:-0}" -lt "$want" ] || return 0
    HUGETLB_ORIG=$(cat /proc/sys/vm/nr_hugepages)
    if ! echo $((HUGETLB_ORIG + want - free)) 2>/dev/null >/proc/sys/vm/nr_hugepages; then
        HUGETLB_ORIG=
        echo "fio --iomem=mmaphuge needs $want free hugetlb pages: run as root, or reserve them (sysctl vm.nr_hugepages)" >&2
        return 1
    fi
    got=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
    if [ "$got" -lt "$want" ]; then
        hugetlb_restore
        echo "the kernel granted $got free hugetlb pages, fio --iomem=mmaphuge needs $want" >&2
        return 1
    fi
}
hugetlb_restore() {
    [ -z "$HUGETLB_ORIG" ] || echo "$HUGETLB_ORIG" >/proc/sys/vm/nr_hugepages
    HUGETLB_ORIG=
}
