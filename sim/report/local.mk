# One source per line: this file merges with git's union driver (.gitattributes).
libsim_a_SOURCES += sim/report/report.c sim/report/report.h
libsim_a_SOURCES += sim/report/expect.c sim/report/expect.h
libsim_a_SOURCES += sim/report/svg.c sim/report/svg.h
libsim_a_SOURCES += sim/report/junit.c sim/report/junit.h
libsim_a_SOURCES += sim/report/xml.c sim/report/xml.h
libsim_a_SOURCES += sim/report/coll_report.c sim/report/coll_report.h
libsim_a_SOURCES += sim/report/human.c sim/report/human.h
libsim_a_SOURCES += sim/report/plot.c sim/report/plot.h
libsim_a_SOURCES += sim/report/compare.c sim/report/compare.h
libsim_a_SOURCES += sim/report/links.c sim/report/links.h
libsim_a_SOURCES += sim/report/scaling.c sim/report/scaling.h
libsim_a_SOURCES += sim/report/resultsdb.c sim/report/resultsdb.h
libsim_a_SOURCES += sim/report/pareto.c sim/report/pareto.h
libsim_a_SOURCES += sim/report/html.c sim/report/html.h
libsim_a_SOURCES += sim/report/validation.c sim/report/validation.h
