# Helpers shared by the CLI tests (bef_run_test.sh, hlo_run_test.sh,
# cuda_emulator_cli_test.sh): run a command capturing stdout, stderr and its
# exit code, and count checks and failures. Source it after setting TMP (a
# scratch directory) and CLI_TOOL (the program name its errors start with).

failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run CMD...: captures stdout, stderr and the exit code.
run() {
  "$@" >"$TMP/out" 2>"$TMP/err"
  code=$?
  out=$(cat "$TMP/out")
  err=$(cat "$TMP/err")
}
expect_code() {
  checks=$((checks + 1))
  [[ $code == "$1" ]] || fail "$2: exit code $code, expected $1 (stdout: $out; stderr: $err)"
}
expect_out() {
  checks=$((checks + 1))
  [[ $out == "$1" ]] || fail "$2: stdout was [$out], expected [$1]"
}
expect_out_has() {
  checks=$((checks + 1))
  [[ $out == *"$1"* ]] || fail "$2: stdout [$out] lacks [$1]"
}
# stderr must be exactly one line "$CLI_TOOL: error: ..." containing $1.
expect_err_line() {
  checks=$((checks + 1))
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  [[ $lines == 1 && $err == "$CLI_TOOL: error: "* && $err == *"$1"* ]] ||
    fail "$2: stderr was [$err], expected one error line containing [$1]"
}
# Prints the summary line and returns whether every check passed.
report() {
  echo "$1: $((checks - failures)) of $checks checks passed"
  [[ $failures == 0 ]]
}
