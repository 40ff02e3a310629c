#!/bin/sh
# Runs every tests/*.sh; fails when one of them fails.
status=0
for t in tests/*.sh; do
  [ -e "$t" ] || continue
  if sh "$t"; then echo "ok $t"; else echo "FAIL $t"; status=1; fi
done
exit $status
