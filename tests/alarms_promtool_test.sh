#!/bin/sh
# The seed alarm rules exported as Prometheus rules pass `promtool check rules`, and a
# `promtool test rules` unit test fires and resolves each one on synthetic series.
# usage: alarms_promtool_test.sh SURGE_BINARY REPO_ROOT
set -eu
surge=$1
root=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$surge" alarms export --prometheus --rules "$root/deploy/alarms/seed_rules.yaml" --out "$dir/seed_rules.prom.yaml"
"$surge" alarms export --prometheus --rules "$root/deploy/alarms/engine_rules.yaml" --out "$dir/engine_rules.prom.yaml"
promtool check rules "$dir/seed_rules.prom.yaml" "$dir/engine_rules.prom.yaml"
cp "$root/deploy/alarms/seed_rules_test.yaml" "$dir/"
promtool test rules "$dir/seed_rules_test.yaml"
