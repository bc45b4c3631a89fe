#!/bin/sh
# make check: doc/ttasim.1 names every command of 'ttasim --help' and, in its
# synopsis, every option of the usage lines of the commands it spells out
# (exit 1 naming what is missing: a command or option added without its man line).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
ttasim=$top_builddir/ttasim
man=$top_srcdir/doc/ttasim.1
[ -r "$man" ] || { echo "test_manpage: no $man" >&2; exit 99; }
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$man" | sed 's/\\-/-/g')
status=0
commands=$("$ttasim" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 && $1 != "Commands:" {print $1}')
[ -n "$commands" ] || { echo "test_manpage: no commands in ttasim --help" >&2; exit 99; }
for c in $commands; do
    grep -q "^\.B $c\$" "$man" || { echo "FAIL: doc/ttasim.1 has no COMMANDS entry '.B $c'"; status=1; }
    printf '%s\n' "$synopsis" | grep -qw -- "$c" || { echo "FAIL: doc/ttasim.1's SYNOPSIS does not name $c"; status=1; }
done
for o in --max-memory --max-time; do
    printf '%s\n' "$synopsis" | grep -q -- "$o" || { echo "FAIL: doc/ttasim.1's SYNOPSIS lacks $o"; status=1; }
done
# The commands whose options the synopsis spells out: each option of their usage line.
for c in run compare check merge profile calibrate collective; do
    opts=$("$ttasim" "$c" --help | head -n 1 | grep -oE -- '(^| |\[|\|)--?[a-z][a-z-]*' | sed 's/^[ [|]*//' | sort -u)
    for o in $opts; do
        [ "$o" = --help ] && continue
        printf '%s\n' "$synopsis" | grep -qE -- "(^|[ \[])$o( |\$|\])" ||
            { echo "FAIL: doc/ttasim.1's SYNOPSIS lacks $o of 'ttasim $c'"; status=1; }
    done
done
exit $status
