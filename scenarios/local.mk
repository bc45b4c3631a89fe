scenariodir = $(pkgdatadir)/scenarios
dist_scenario_DATA = scenarios/quickstart.json scenarios/README.md
profilesdir = $(pkgdatadir)/scenarios/profiles
dist_profiles_DATA = \
	scenarios/profiles/resnet50-imagenet-sgd.json \
	scenarios/profiles/resnet50-imagenet-lars.json \
	scenarios/profiles/bert-large-lamb.json \
	scenarios/profiles/vit-b32-imagenet-lamb.json
dist_profiles_DATA += scenarios/profiles/fashion-mnist-mlp-lamb.json
