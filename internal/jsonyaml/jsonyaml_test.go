package jsonyaml

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// same checks that Convert gives JSONToYAML's bytes for js.
func same(t *testing.T, js []byte) {
	t.Helper()
	want, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatalf("JSONToYAML(%s): %v", js, err)
	}
	got, err := Convert(js)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("Convert(%s):\n--- got\n%s\n--- want (JSONToYAML)\n%s", js, got, want)
	}
}

// TestConvertCases covers each rule: quoting styles, folding at 80
// columns (values fold, keys do not), number formats, key order, empty
// collections, nesting, and inputs left to the slow path.
func TestConvertCases(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, js := range []string{
		`{}`, `[]`, `{"a":{},"b":[],"c":[{}],"d":[[]],"e":[[1,2],[{"x":1}]]}`,
		`{"s":["plain","with space","a: b","a:b","#x","a #b","a#b","-","- x","-x","?","? x",":x","--- x","...x",
			"'q'","\"dq\"","it's","x ","  x","", "~","null","Null","true","yes","No","on","OFF","y","n","<<",
			".5",".inf",".x","1","-1","+1","1.5","1e3","0x1F","0o17","0b101","-0b1","1_000","12:30","1:2:3","1:61",
			"2024-01-01","2024-01-01T00:00:00Z","2024-1-2 3:4:5","2024-13-01","10s","80/TCP","1.2.3.4","back\\slash",
			"%x","@x","` + "`" + `x","!x","&x","*x","|","|x",">x","[x","{x","x]","x,y","a{b}"]}`,
		`{"n":[0,-0,1,-1,9223372036854775807,9223372036854775808,18446744073709551615,18446744073709551616,
			1.5,-2.25,1e21,1e-7,123456789012345680000,0.1,1e400]}`,
		`{"b":true,"c":false,"d":null}`,
		`{"m":"` + long + `","k":["` + long + `"],"q":"a: ` + long + `","d":"true ` + long + `","x":{"y":{"z":"` + long + `"}}}`,
		`{"m":"` + strings.Repeat("x", 90) + ` y  z  ` + strings.Repeat("w ", 40) + `"}`,
		`{"` + strings.TrimSpace(long) + `": 1, "` + strings.Repeat("k", 128) + `": 2}`,
		`{"b":1,"a":2,"B":3,"_":4,"1":5,"10":6,"9":7,"a10":8,"a9":9,"a09":10,"a0":11,"a00":12,"a1":14,"-":15,"a.b":16,"a-b":17,"":18}`,
		// Left to the slow path: it must still give the same bytes.
		`{"nl":"a\nb"}`, `{"tab":"a\tb"}`, `{"u":"caf\u00e9"}`, `{"` + strings.Repeat("k", 129) + `":1}`, `"top"`, `1`,
	} {
		same(t, []byte(js))
	}
}

// TestConvertRandom compares Convert with JSONToYAML on random documents
// built from the characters and words that matter to YAML.
func TestConvertRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	atoms := []string{"a", "b", "Z", "0", "1", "9", " ", ":", "#", "-", ".", "'", "\"", "\\", "?", ",", "[", "{", "y", "true", "null", "1e3", "0x", "2024-01-01", "12:30", "_", "~", "é", "\t"}
	str := func() string {
		var b strings.Builder
		for n := r.IntN(12); n > 0; n-- {
			b.WriteString(atoms[r.IntN(len(atoms))])
		}
		if r.IntN(8) == 0 {
			b.WriteString(strings.Repeat("long words ", 10))
		}
		return b.String()
	}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(8); {
		case depth > 3 || k < 3:
			return str()
		case k == 3:
			return []any{r.IntN(1000) - 500, r.Float64() * 1e6, r.IntN(2) == 0, nil}
		case k < 6:
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		}
		m := map[string]any{}
		for n := r.IntN(5); n > 0; n-- {
			m[str()] = gen(depth + 1)
		}
		return m
	}
	compared := 0
	for range 3000 {
		doc := map[string]any{"doc": gen(0), "x": gen(1)}
		if !orderable(doc) {
			continue
		}
		compared++
		js, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		same(t, js)
		if t.Failed() {
			return
		}
	}
	if compared < 1000 {
		t.Errorf("only %d random documents compared", compared)
	}
}

// orderable says whether v2's key order is a strict total order on the
// keys of every object of v: otherwise (keys such as a1b and a10 next to
// a9) JSONToYAML's own output changes from run to run, and there is no
// single answer to compare with.
func orderable(v any) bool {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			if !orderable(x) {
				return false
			}
		}
	case map[string]any:
		var keys [][]byte
		for k, x := range v {
			if !orderable(x) {
				return false
			}
			keys = append(keys, []byte(k))
		}
		for _, a := range keys {
			for _, b := range keys {
				if string(a) != string(b) && keyLess(a, b) == keyLess(b, a) {
					return false
				}
				for _, c := range keys {
					if keyLess(a, b) && keyLess(b, c) && !keyLess(a, c) {
						return false
					}
				}
			}
		}
	}
	return true
}

// FuzzConvert: Convert gives JSONToYAML's bytes for any JSON document.
func FuzzConvert(f *testing.F) {
	f.Add([]byte(`{"a":"b: c","d":[1,"2",{"e":null}]}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		var v any
		if json.Unmarshal(js, &v) != nil || !orderable(v) {
			return
		}
		want, err := yaml.JSONToYAML(js)
		if err != nil {
			return
		}
		got, err := Convert(js)
		if err != nil || string(got) != string(want) {
			t.Fatalf("Convert(%s) = %q, %v; want %q", js, got, err, want)
		}
	})
}
