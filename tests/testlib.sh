# tests/testlib.sh, sourced by a shell test after it sets `name` and
# top_srcdir: $ttasim and $src as absolute paths, a $work directory removed
# on exit, fail (counted in $fails), expect_rc and need_chromium.
top_builddir=${top_builddir:-.}
ttasim=$(cd "$top_builddir" && pwd)/ttasim
src=$(cd "$top_srcdir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-$name.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect_rc RC CMD...: runs CMD (stdout to $work/out, stderr to $work/err), checks its exit status.
expect_rc() {
    want=$1
    shift
    "$@" >"$work/out" 2>"$work/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "exit $got, wanted $want: $* ($(cat "$work/out" "$work/err"))"
}
# need_chromium: $chromium, headless Chromium to lay pages out in, and python3 to read
# what it wrote, or the test is skipped (77) saying which is missing.
need_chromium() {
    chromium=$(command -v chromium || command -v chromium-browser) ||
        { echo "skipped: chromium not found (README's set-up installs Debian's chromium)"; exit 77; }
    command -v python3 >/dev/null || { echo "skipped: python3 not found (it reads the laid-out page)"; exit 77; }
}
