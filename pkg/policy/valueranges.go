package policy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// ValueRange bounds a field of a kind's policies that holds a Kubernetes
// quantity ("1Mi", "65535", 1024): its implementation checks the bounds
// when it translates a policy, not its CRD's schema. Envoy Gateway's
// buffer limits and HTTP/2 window sizes are such fields.
type ValueRange struct {
	// Path is the dotted path below spec of the field; segments may end
	// in "[]" (each entry of that list).
	Path BackendRefPath
	// Min and Max are the inclusive bounds, whole numbers.
	Min, Max int64
	// On, if set, are listener protocols: the value is checked only at a
	// target with a listener of one of them (as ObjectRefPath.On), the
	// policy then Invalid at those targets only (Envoy Gateway checks a
	// ClientTrafficPolicy's HTTP/2 settings for its HTTP listeners).
	On []string
}

// String renders the range in its annotation form:
// "connection.bufferLimit=0..4294967295".
func (r ValueRange) String() string {
	s := fmt.Sprintf("%s=%d..%d", specPrefixed(r.Path), r.Min, r.Max)
	if len(r.On) > 0 {
		s += " on=" + strings.Join(r.On, ",")
	}
	return s
}

// specPrefixed writes a path as the annotation reads it back: a path
// starting with a field named spec gets the "spec." that parsing drops.
func specPrefixed(p BackendRefPath) string {
	if s := string(p); s == "spec" || strings.HasPrefix(s, "spec.") || strings.HasPrefix(s, "spec[]") {
		return "spec." + s
	}
	return string(p)
}

// ValueRangesString renders a kind's ranges as the annotation value
// ("none" for none).
func ValueRangesString(rs []ValueRange) string { return entriesString(rs) }

// onWord is the " on=" that starts a range's listener protocols.
var onWord = regexp.MustCompile(`\s+on=`)

// ParseValueRanges reads the annotation attache.dev/value-ranges: entries
// separated by ";", each "<path>=<min>..<max>", optionally followed by
// " on=<protocol>,..."; "none" for none.
func ParseValueRanges(v string) ([]ValueRange, error) {
	return parseEntries(v, "connection.bufferLimit=0..4294967295", func(entry string) (ValueRange, error) {
		var on []string
		if loc := onWord.FindStringIndex(entry); loc != nil {
			val := strings.TrimSpace(entry[loc[1]:])
			i := loc[0]
			if on = splitList(val); len(on) == 0 {
				return ValueRange{}, fmt.Errorf("entry %q: on=%s: want listener protocols (HTTP,HTTPS)", entry, val)
			}
			entry = entry[:i]
		}
		path, bounds, ok := strings.Cut(entry, "=")
		lo, hi, ok2 := strings.Cut(bounds, "..")
		if !ok || !ok2 {
			return ValueRange{}, fmt.Errorf("entry %q is not <path>=<min>..<max>", entry)
		}
		r := ValueRange{Path: BackendRefPath(strings.TrimPrefix(strings.TrimSpace(path), "spec."))}
		var err error
		if r.Min, err = strconv.ParseInt(strings.TrimSpace(lo), 10, 64); err != nil {
			return ValueRange{}, fmt.Errorf("value range %s: minimum %q is not a whole number", r.Path, strings.TrimSpace(lo))
		}
		if r.Max, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil {
			return ValueRange{}, fmt.Errorf("value range %s: maximum %q is not a whole number", r.Path, strings.TrimSpace(hi))
		}
		r.On = on
		return r, r.validate()
	})
}

// validate checks the path and that the bounds are in order.
func (r ValueRange) validate() error {
	if err := r.Path.validate(); err != nil {
		return fmt.Errorf("value range: %v", err)
	}
	if r.Min > r.Max {
		return fmt.Errorf("value range %s: minimum %d is above maximum %d", r.Path, r.Min, r.Max)
	}
	for _, proto := range r.On {
		if proto == "" || strings.ContainsAny(proto, " ,=;*+.") {
			return fmt.Errorf("value range %s: on=%s: want listener protocols (HTTP,HTTPS)", r.Path, strings.Join(r.On, ","))
		}
	}
	if err := checkProtocols(r.On); err != nil {
		return fmt.Errorf("value range %s: %v", r.Path, err)
	}
	return nil
}

// coreProtocols are Gateway API's listener protocols.
var coreProtocols = []string{"HTTP", "HTTPS", "TLS", "TCP", "UDP"}

// checkProtocols refuses a protocol that is one of Gateway API's in
// another case ("http"): listener protocols are matched as written, so
// it would never match. Other names (an implementation's own protocols)
// are taken as written.
func checkProtocols(on []string) error {
	for _, proto := range on {
		for _, core := range coreProtocols {
			if proto != core && strings.EqualFold(proto, core) {
				return fmt.Errorf("on=%s: listener protocols are matched as written: %s, not %s", strings.Join(on, ","), core, proto)
			}
		}
	}
	return nil
}

// ValueRangesOnListeners reports whether some of the kind's value ranges
// are checked at targets with listeners of given protocols only.
func (k *Kind) ValueRangesOnListeners() bool {
	for _, r := range k.ValueRanges {
		if len(r.On) > 0 {
			return true
		}
	}
	return false
}

// FieldProblem is a field of a policy that its implementation refuses,
// with the reason.
type FieldProblem struct {
	// Field is where, as "spec.connection.bufferLimit".
	Field string
	// Message says why, after the field: "1T is out of range, ...".
	Message string
	// Reason, when set, is the condition reason its implementation gives
	// for this problem (Requirement.Reason); "" for Invalid.
	Reason string
}

// OutOfRange checks the policy's fields against its kind's ValueRanges
// checked at every target (those without On): each value that is not a
// quantity, not a whole number, or outside its bounds, in the order of the
// kind's ranges. A field absent or null is not checked.
func (p *Policy) OutOfRange() []FieldProblem {
	return p.OutOfRangeWhere(func(r ValueRange) bool { return len(r.On) == 0 })
}

// OutOfRangeWhere is OutOfRange for the ranges judge accepts.
func (p *Policy) OutOfRangeWhere(judge func(ValueRange) bool) []FieldProblem {
	var out []FieldProblem
	for _, r := range p.Kind.ValueRanges {
		if !judge(r) {
			continue
		}
		names, lists := r.Path.segments()
		parent, last := names[:len(names)-1], names[len(names)-1]
		walkPath(p.Spec, "spec", parent, lists[:len(lists)-1], func(v any, at string) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			vals := []any{m[last]}
			fields := []string{at + "." + last}
			if lists[len(lists)-1] {
				l, _ := m[last].([]any)
				vals, fields = l, nil
				for i := range l {
					fields = append(fields, fmt.Sprintf("%s.%s[%d]", at, last, i))
				}
			}
			for i, val := range vals {
				if msg := r.check(val); msg != "" {
					out = append(out, FieldProblem{Field: fields[i], Message: msg})
				}
			}
		})
	}
	return out
}

// check returns why v is refused, "" when it is fine or absent.
func (r ValueRange) check(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'f', -1, 32)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		s = fmt.Sprint(x)
	default:
		return fmt.Sprintf("%v is not a quantity", v)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Sprintf("%q is not a quantity", s)
	}
	n, ok := q.AsInt64()
	if !ok {
		return fmt.Sprintf("%s is not a whole number (of bytes, or of the field's unit) that fits in 64 bits", s)
	}
	if n < r.Min || n > r.Max {
		return fmt.Sprintf("%s is out of range, must be between %d and %d", s, r.Min, r.Max)
	}
	return ""
}
