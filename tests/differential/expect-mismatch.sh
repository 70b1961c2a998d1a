#!/usr/bin/env bash
# Runs a --verify command that must find a mismatch: exit status 1 and a
# MISMATCH line naming a transposed tensor's strides.
out=$("$@" 2>&1); rc=$?
echo "$out"
if [ "$rc" -ne 1 ]; then echo "expected exit status 1, got $rc"; exit 1; fi
echo "$out" | grep -q "MISMATCH" || { echo "no MISMATCH reported"; exit 1; }
echo "$out" | grep -q "strides: predicted" || { echo "no strides mismatch"; exit 1; }
echo "verifier caught the planted rule"
