scenariodir = $(pkgdatadir)/scenarios
dist_scenario_DATA = scenarios/quickstart.json scenarios/README.md
