# make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGETS="idx units"]: builds the libFuzzer
# targets of tests/fuzz/ with clang in fuzz-build/ and runs each N seconds.
FUZZ_SECONDS = 60
FUZZ_OUT = $(abs_top_builddir)/fuzz-build
FUZZ_C_FILES = $(filter %.c,$(libcommon_a_SOURCES) $(libtrainer_a_SOURCES) \
	$(libplatforms_a_SOURCES) $(libcollectives_a_SOURCES) $(libsim_a_SOURCES) $(nodist_libsim_a_SOURCES))
EXTRA_DIST += tests/fuzz
fuzz:
	FUZZ_SECONDS='$(FUZZ_SECONDS)' FUZZ_C_FILES='$(FUZZ_C_FILES)' \
	FUZZ_DEP_CFLAGS='$(MPI_CFLAGS) $(SIMGRID_CFLAGS) $(JANSSON_CFLAGS) $(OPENBLAS_CFLAGS) $(ZLIB_CFLAGS) $(SQLITE3_CFLAGS) $(PROTOBUF_C_CFLAGS)' \
	FUZZ_DEP_LIBS='$(MPI_LIBS) $(SIMGRID_LIBS) $(JANSSON_LIBS) $(OPENBLAS_LIBS) $(ZLIB_LIBS) $(SQLITE3_LIBS) $(PROTOBUF_C_LIBS)' \
	$(SHELL) $(srcdir)/tests/fuzz/run.sh '$(abs_top_srcdir)' '$(abs_top_builddir)' '$(FUZZ_OUT)'
clean-local: clean-fuzz
clean-fuzz:
	rm -rf '$(FUZZ_OUT)'
.PHONY: fuzz clean-fuzz
