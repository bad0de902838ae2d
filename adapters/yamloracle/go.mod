// A tool for schedcheck's tests, not part of the adapter (see main.go).
module schedcheck.dev/adapters/yamloracle

go 1.26.0

require gopkg.in/yaml.v2 v2.4.0
