# generated.sh: sourced by the scripts that write a generated page (make validation-table).
# generated_finish TMP OUT WRITER [--check]: with --check, exit 1 unless OUT holds TMP's bytes
# (the page is stale); otherwise replace OUT with TMP. A script may finish several pages.
generated_finish() {
    if [ "${4:-}" = --check ]; then
        cmp -s "$1" "$2" || { echo "$2 is not what $3 writes: run make validation-table" >&2; exit 1; }
        return 0
    fi
    cp "$1" "$2"
    echo "wrote $2"
}
