package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// TestEffectiveFileGivenTwice: a file named twice (or also inside a folder
// given) is read once, so nothing is "a duplicate of itself"; the same
// object in two different files is still a duplicate.
func TestEffectiveFileGivenTwice(t *testing.T) {
	const dir = "../../examples/parable"
	want, _, err := run(t, "effective", "-f", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-f", dir + "/policies.yaml", "-f", dir},
		{"-f", dir, "-f", dir},
		{"-f", dir + "/crds.yaml", "-f", dir + "/crds.yaml", "-f", "./" + dir + "/topology.yaml", "-f", dir + "/policies.yaml"},
	} {
		out, errOut, err := run(t, append([]string{"effective"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if errOut != "" {
			t.Errorf("%v: unexpected stderr:\n%s", args, errOut)
		}
		if out != want {
			t.Errorf("%v: the output differs from -f %s's", args, dir)
		}
	}

	copyPath := filepath.Join(t.TempDir(), "policies.yaml")
	data, err := os.ReadFile(dir + "/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "effective", "-f", dir, "-f", copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := "duplicate object (first seen in " + dir + "/policies.yaml#1)"; !strings.Contains(errOut, want) {
		t.Errorf("a real duplicate must be reported (%q):\n%s", want, errOut)
	}
}
