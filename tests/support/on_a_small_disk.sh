#!/bin/sh
# Mounts a tmpfs of "$1" at "$2", copies files into it ("$3": lines of
# "source<TAB>name"), fills it to "$4" KiB free, runs the rest of the
# command line, and unmounts it; in a mount namespace of its own (unshare),
# so that nothing else sees the mount.
# (helpers.run_on_a_full_disk runs it under `unshare -rm`.)
set -e
mount -t tmpfs -o "size=$1" tmpfs "$2"
printf '%s' "$3" | while IFS="$(printf '\t')" read -r source name; do
  [ -n "$source" ] && mkdir -p "$(dirname "$2/$name")" && cp "$source" "$2/$name"
done
dd if=/dev/zero of="$2/filler" bs=64k 2>/dev/null || true
truncate -s "-$4K" "$2/filler"
disk="$2"
shift 4
set +e
"$@"
status=$?
umount "$disk"
exit $status
