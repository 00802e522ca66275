# What the check scripts of this folder share, sourced by each: a failure that shows what the
# check kept in $work (out, err and, for the deadlock checks, stacks), and a command run with the
# status it must end with. The caller sets $check and $work and runs inside $work.

fail() {
  echo "FAILED $check: $*" >&2
  local file
  for file in out err stacks; do
    [[ -s $work/$file ]] && { echo "--- $file:"; cat "$work/$file"; } >&2
  done
  exit 1
}

expect_run() { # <status> <command...>: stdout in out, stderr in err
  local want=$1
  shift
  "$@" > out 2> err
  local got=$?
  ((got == want)) || fail "'$*' exited with $got; expected $want"
}
