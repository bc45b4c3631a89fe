#!/bin/sh
# make check: doc/ttasim.1's SYNOPSIS is what doc/synopsis.sh generates from
# the usage lines of 'ttasim COMMAND --help' ('make man' rewrites it), names
# every command of 'ttasim --help', and every option that a command's --help
# documents is in that command's usage lines (exit 1 naming what is missing:
# an option documented below the usage but left out of it).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
ttasim=$top_builddir/ttasim
man=$top_srcdir/doc/ttasim.1
[ -r "$man" ] || { echo "test_manpage: no $man" >&2; exit 99; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ttasim-test-manpage.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
status=0
sh "$top_srcdir/doc/synopsis.sh" "$ttasim" >"$work/generated" || { echo "test_manpage: doc/synopsis.sh failed" >&2; exit 99; }
sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$man" | sed '1d;$d' >"$work/committed"
if ! cmp -s "$work/generated" "$work/committed"; then
    echo "FAIL: doc/ttasim.1's SYNOPSIS is not what doc/synopsis.sh writes from --help; run 'make man' and commit it:"
    diff "$work/committed" "$work/generated"
    status=1
fi
synopsis=$(sed 's/\\-/-/g; s/\\f[BIR]//g; s/\\&//g' "$work/committed")
commands=$("$ttasim" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 && $1 != "Commands:" {print $1}')
[ -n "$commands" ] || { echo "test_manpage: no commands in ttasim --help" >&2; exit 99; }
global=$(printf '%s\n' "$synopsis" | grep -v '^ttasim [a-z]')
# options OPTION-TEXT: every -x and --long-name at the start of a word.
options() { grep -oE -- '(^|[][ |(,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ |(,]*//' | sort -u; }
for c in $commands; do
    grep -q "^\.B $c\$" "$man" || { echo "FAIL: doc/ttasim.1 has no COMMANDS entry '.B $c'"; status=1; }
    mine=$(printf '%s\n' "$synopsis" | grep "^ttasim $c\( \|\$\)")
    [ -n "$mine" ] || { echo "FAIL: doc/ttasim.1's SYNOPSIS does not name $c"; status=1; continue; }
    # the options --help documents: on its usage lines, its "ttasim CMD ..." lines and
    # its option lines (beginning with "-"), not in prose ("sbatch --array", "ulimit -v")
    for o in $("$ttasim" "$c" --help | grep -E '^(usage: )?(ttasim | *-)' | options); do
        [ "$o" = --help ] && continue
        printf '%s\n%s\n' "$mine" "$global" | grep -qE -- "(^|[][ |(,])$o([] |=,]|\$)" ||
            { echo "FAIL: 'ttasim $c --help' names $o, its usage lines (doc/ttasim.1's SYNOPSIS) do not"; status=1; }
    done
done
exit $status
