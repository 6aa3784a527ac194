package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestEffectiveGolden(t *testing.T) {
	for _, ex := range []struct{ name, path string }{
		{"parable", "../../examples/parable"},
		{"example-3", "../../examples/gep-713/example-3"},
	} {
		name := "effective-" + ex.name + ".json"
		t.Run(name, func(t *testing.T) {
			out, errOut, err := run(t, "effective", "-f", ex.path, "-o", "json")
			if err != nil {
				t.Fatalf("%v (stderr %q)", err, errOut)
			}
			if errOut != "" {
				t.Errorf("unexpected stderr:\n%s", errOut)
			}
			golden(t, name, []byte(out))
		})
	}
}

// TestEffectiveYAML: -o yaml is the same document as -o json.
func TestEffectiveYAML(t *testing.T) {
	out, errOut, err := run(t, "effective", "-f", "../../examples/gep-713/example-3", "-o", "yaml")
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, errOut)
	}
	golden(t, "effective-example-3.yaml", []byte(out))
	js, _, err := run(t, "effective", "-f", "../../examples/gep-713/example-3", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML, fromJSON any
	if err := yaml.Unmarshal([]byte(out), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromYAML, fromJSON) {
		t.Error("-o yaml and -o json give different documents")
	}
}

func TestEffectiveErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"effective", "-f", "../../examples/parable", "-o", "wide"}, []string{`unknown output format "wide"`, "-o json or -o yaml"}},
		{[]string{"effective"}, []string{"no input", "-f PATH"}},
		// An unreadable path fails the run (exit 1) after printing what
		// could be read.
		{[]string{"effective", "-f", "testdata/no-such-dir"}, []string{"testdata/no-such-dir"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := run(t, tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
