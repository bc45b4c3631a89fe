#!/bin/sh
# The SYNOPSIS of doc/ttasim.1, generated from the usage lines that
# 'ttasim COMMAND --help' prints (its first lines, up to a blank one), so
# that the man page names every command and option the commands document.
#   doc/synopsis.sh TTASIM            print the section's body
#   doc/synopsis.sh TTASIM MANPAGE    write it into MANPAGE ('make man')
# tests/test_manpage.sh fails when the committed page differs from it.
ttasim=${1:?usage: doc/synopsis.sh TTASIM [MANPAGE]}
man=$2
# usage LINES: the usage block of a --help text, joined, without "usage: ttasim ".
usage() { awk 'done || (NR > 1 && /^$/) {done = 1; next} {sub(/^ +/, ""); printf "%s%s", (NR > 1 ? " " : ""), $0} END {print ""}' |
    sed 's/^usage: ttasim //'; }
synopsis() {
    commands=$("$ttasim" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 && $1 != "Commands:" {print $1}')
    [ -n "$commands" ] || { echo "synopsis.sh: no commands in '$ttasim --help'" >&2; return 1; }
    for c in $commands; do
        help=$("$ttasim" "$c" --help) || { echo "synopsis.sh: '$ttasim $c --help' failed" >&2; return 1; }
        printf '%s\n' "$help" | usage | awk -v cmd="$c" '{print cmd "\t" $0}'
    done
    help=$("$ttasim" --help) || return 1
    printf '%s\n' "$help" | usage | awk '{print "\t" $0}'
}
# Each form (alternatives at bracket depth 0 split at " | ") as one roff line:
# options and lowercase words bold, metavariables (uppercase) italic.
roff() {
    awk -F '\t' '
    function conv(s,   out, t, c, prev) {
        out = ""; prev = " "
        while (length(s) > 0) {
            if (index(" [|(,", prev) && match(s, /^--?[A-Za-z][A-Za-z0-9-]*/)) {
                t = substr(s, 1, RLENGTH); gsub(/-/, "\\-", t); out = out "\\fB" t "\\fR"
            } else if (match(s, /^[A-Za-z][A-Za-z0-9_.]*/)) {
                t = substr(s, 1, RLENGTH); gsub(/-/, "\\-", t)
                out = out (t ~ /^[A-Z]/ ? "\\fI" t "\\fR" : "\\fB" t "\\fR")
            } else {
                RLENGTH = 1; c = substr(s, 1, 1)
                out = out (c == "-" ? "\\-" : c == "\\" ? "\\e" : c)
            }
            prev = substr(s, RLENGTH, 1); s = substr(s, RLENGTH + 1)
        }
        return out
    }
    {
        cmd = $1; s = $2; depth = 0; start = 1
        for (i = 1; i <= length(s); i++) {
            c = substr(s, i, 1)
            if (c == "[") depth++
            else if (c == "]") depth--
            else if (depth == 0 && substr(s, i, 3) == " | ") {
                form(cmd, substr(s, start, i - start)); start = i + 3; i += 2
            }
        }
        form(cmd, substr(s, start))
    }
    function form(cmd, f) {
        if (cmd != "" && index(f, cmd " ") != 1 && f != cmd) f = cmd " " f
        print "\\&\\fBttasim\\fR " conv(f)
        print ".br"
    }'
}
body=$(printf '.nh\n' && synopsis | roff && printf '.hy\n') || exit 2 # options are not hyphenated
if [ -z "$man" ]; then
    printf '%s\n' "$body"
    exit 0
fi
tmp=$man.tmp.$$
body=$body awk '
    /^\.SH / && in_syn { in_syn = 0 }
    /^\.SH SYNOPSIS/ { print; print ENVIRON["body"]; in_syn = 1; next }
    !in_syn { print }' "$man" >"$tmp" && mv "$tmp" "$man" || { rm -f "$tmp"; exit 2; }
