// Package jsonyaml converts a JSON document to YAML, byte for byte as
// sigs.k8s.io/yaml.JSONToYAML does, at a fraction of its cost.
//
// JSONToYAML parses the JSON with a YAML parser into interface{} values and
// encodes them again with go.yaml.in/yaml/v2: for a few megabytes of
// `attache effective` output that costs twenty times the JSON encoding.
// Convert reads the JSON once into a light tree and writes the YAML
// directly, following the v2 encoder's rules for what JSON can hold: map
// keys in its order, its choice among plain, single-quoted and
// double-quoted scalars, its folding of long scalars at 80 columns and its
// number formats. It does so for printable ASCII text only; a document with
// any other string (a line break, a tab, non-ASCII) or a key longer than
// 128 bytes is handed to JSONToYAML, so the output is always the same.
package jsonyaml

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Convert returns the YAML form of the JSON document js, as
// yaml.JSONToYAML(js) would.
func Convert(js []byte) ([]byte, error) {
	p := parser{data: js}
	if v, ok := p.document(); ok && (v.kind == kObject || v.kind == kArray) {
		e := emitter{out: make([]byte, 0, len(js)), whitespace: true, indention: true}
		if e.node(v, -1, false) {
			e.writeIndent(0) // the document ends with a line break
			return e.out, nil
		}
	}
	return yaml.JSONToYAML(js)
}

type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

// value is a JSON value. text is a string's content or a number's
// literal; items an array's elements; fields an object's members.
type value struct {
	kind   kind
	text   []byte
	items  []value
	fields []field
}

type field struct {
	key []byte
	val value
}

// parser reads one JSON value (encoding/json's output: valid JSON).
type parser struct {
	data []byte
	pos  int
}

// document parses the whole input; ok is false on anything unexpected,

// after reads what follows an element of an object or array: a comma (the
// container goes on: done is false) or its closer (done, ok). Anything else,
// or the end of the input, is malformed (done, not ok).
func (p *parser) after(closer byte) (done, ok bool) {
	p.space()
	if p.pos >= len(p.data) {
		return true, false
	}
	p.pos++
	switch p.data[p.pos-1] {
	case ',':
		return false, true
	case closer:
		return true, true
	}
	return true, false
}

// which sends the input to the slow path (that reports real errors).
func (p *parser) document() (value, bool) {
	v, ok := p.value()
	p.space()
	return v, ok && p.pos == len(p.data)
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (value, bool) {
	p.space()
	if p.pos >= len(p.data) {
		return value{}, false
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		p.pos++
		v := value{kind: kObject}
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return v, true
		}
		for {
			p.space()
			k, ok := p.str()
			if !ok {
				return v, false
			}
			p.space()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return v, false
			}
			p.pos++
			x, ok := p.value()
			if !ok {
				return v, false
			}
			v.fields = append(v.fields, field{k, x})
			if done, ok := p.after('}'); done {
				return v, ok
			}
		}
	case c == '[':
		p.pos++
		v := value{kind: kArray}
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return v, true
		}
		for {
			x, ok := p.value()
			if !ok {
				return v, false
			}
			v.items = append(v.items, x)
			if done, ok := p.after(']'); done {
				return v, ok
			}
		}
	case c == '"':
		s, ok := p.str()
		return value{kind: kString, text: s}, ok
	case c == 't':
		return value{kind: kTrue}, p.word("true")
	case c == 'f':
		return value{kind: kFalse}, p.word("false")
	case c == 'n':
		return value{kind: kNull}, p.word("null")
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		for p.pos < len(p.data) && strings.IndexByte("+-.eE0123456789", p.data[p.pos]) >= 0 {
			p.pos++
		}
		return value{kind: kNumber, text: p.data[start:p.pos]}, true
	}
	return value{}, false
}

func (p *parser) word(w string) bool {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(w)) {
		return false
	}
	p.pos += len(w)
	return true
}

// str reads a string. Without escapes its content is the input itself;
// with escapes, encoding/json decodes it (rare in our output).
func (p *parser) str() ([]byte, bool) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, false
	}
	start := p.pos
	escaped := false
	for i := start + 1; i < len(p.data); i++ {
		switch p.data[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			p.pos = i + 1
			if !escaped {
				return p.data[start+1 : i], true
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.pos], &s); err != nil {
				return nil, false
			}
			return []byte(s), true
		}
	}
	return nil, false
}

// The emitter's layout constants: go.yaml.in/yaml/v2's defaults.
const (
	indentStep = 2
	bestWidth  = 80
	maxKeyLen  = 128 // longer keys are written as complex keys ("? ")
)

// emitter writes YAML. column, whitespace (the last character written
// separates tokens) and indention (only indentation on this line so far)
// decide, as in the v2 emitter, where line breaks and spaces go.
type emitter struct {
	out        []byte
	column     int
	whitespace bool
	indention  bool
}

func (e *emitter) put(c byte) {
	e.out = append(e.out, c)
	e.column++
}

func (e *emitter) writeIndent(indent int) {
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.out = append(e.out, '\n')
		e.column = 0
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace, e.indention = true, true
}

func (e *emitter) indicator(s string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.out = append(e.out, s...)
	e.column += len(s)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// node writes v in a block collection indented at indent (-1 at the top);
// inMapping says v is a mapping's value. It returns false when v holds
// something only the slow path writes right.
func (e *emitter) node(v value, indent int, inMapping bool) bool {
	switch v.kind {
	case kObject:
		if len(v.fields) == 0 {
			e.indicator("{", true, true, false)
			e.indicator("}", false, false, false)
			return true
		}
		in := indent + indentStep
		if indent < 0 {
			in = 0
		}
		fields := v.fields
		if !slices.IsSortedFunc(fields, compareFields) {
			fields = slices.Clone(fields)
			slices.SortFunc(fields, compareFields)
		}
		for i, f := range fields {
			// A repeated key (never from encoding/json): v2 keeps the last.
			if len(f.key) > maxKeyLen || i > 0 && bytes.Equal(f.key, fields[i-1].key) {
				return false
			}
			e.writeIndent(in)
			if !e.scalar(f.key, in, true) {
				return false
			}
			e.indicator(":", false, false, false)
			if !e.node(f.val, in, true) {
				return false
			}
		}
		return true
	case kArray:
		if len(v.items) == 0 {
			e.indicator("[", true, true, false)
			e.indicator("]", false, false, false)
			return true
		}
		// A sequence that is a mapping's value starts at the key's column.
		in := indent + indentStep
		if indent < 0 {
			in = 0
		} else if inMapping && !e.indention {
			in = indent
		}
		for _, x := range v.items {
			e.writeIndent(in)
			e.indicator("-", true, false, true)
			if !e.node(x, in, false) {
				return false
			}
		}
		return true
	case kString:
		return e.scalar(v.text, max(indent+indentStep, indentStep), false)
	case kNumber:
		s, isString := number(v.text)
		if isString {
			return e.scalar([]byte(s), max(indent+indentStep, indentStep), false)
		}
		e.plain([]byte(s), 0, false)
		return true
	case kTrue:
		e.plain([]byte("true"), 0, false)
	case kFalse:
		e.plain([]byte("false"), 0, false)
	default:
		e.plain([]byte("null"), 0, false)
	}
	return true
}

// number is the text v2 writes for a JSON number: it reads the literal as
// a plain YAML scalar (an int, else an unsigned int, else a float) and
// formats that value. A literal no type holds stays a string.
func number(lit []byte) (string, bool) {
	s := string(lit)
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		return strconv.FormatInt(i, 10), false
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return strconv.FormatUint(u, 10), false
	}
	if yamlFloat.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			switch {
			case math.IsInf(f, 1):
				return ".inf", false
			case math.IsInf(f, -1):
				return "-.inf", false
			}
			return strconv.FormatFloat(f, 'g', -1, 64), false
		}
	}
	return s, true
}

// yamlFloat is the float syntax of YAML 1.1 plain scalars that v2 accepts.
var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// scalar writes a string as v2 does: plain when that reads back as the
// same string and nothing in it is YAML syntax, single-quoted when only
// the syntax is in the way, double-quoted when plain would read back as
// another type (a number, a bool, null, a timestamp). indent is where
// folded lines continue; a key is never folded.
func (e *emitter) scalar(s []byte, indent int, key bool) bool {
	for _, c := range s {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	switch {
	case !plainIsString(s):
		e.doubleQuoted(s, indent, !key)
	case plainAllowed(s):
		e.plain(s, indent, !key)
	default:
		e.singleQuoted(s, indent, !key)
	}
	return true
}

// plainAllowed says whether printable ASCII s can be written plain in a
// block: no leading or trailing space, no leading indicator, no ": " or
// " #" inside, and not a document marker.
func plainAllowed(s []byte) bool {
	n := len(s)
	if n == 0 {
		return true
	}
	if s[0] == ' ' || s[n-1] == ' ' || bytes.HasPrefix(s, []byte("---")) || bytes.HasPrefix(s, []byte("...")) {
		return false
	}
	blankAfter := func(i int) bool { return i+1 >= n || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '?', ':', '-':
		if blankAfter(0) {
			return false
		}
	}
	for i := 1; i < n; i++ {
		switch s[i] {
		case ':':
			if blankAfter(i) {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}

// plainIsString says whether s, written plain, reads back as the string s
// in YAML 1.1 as v2 resolves it, and is not a base-60 float (which v2
// quotes for other parsers' sake).
func plainIsString(s []byte) bool {
	if len(s) == 0 {
		return false // null
	}
	str := string(s)
	switch s[0] {
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		return !special[str]
	case '.':
		if special[str] {
			return false
		}
		_, err := strconv.ParseFloat(str, 64)
		return err != nil
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return true
	}
	if special[str] || isTimestamp(str) {
		return false
	}
	plain := strings.ReplaceAll(str, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return false
	}
	if yamlFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return false
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(rest, 2, 64); err == nil {
			return false
		}
	} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		if _, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
			return false
		}
	}
	return !(strings.IndexByte(str, ':') >= 0 && base60.MatchString(str))
}

// special are the plain words YAML 1.1 reads as bools, nulls, infinities,
// NaN and the merge key.
var special = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`y Y yes Yes YES n N no No NO true True TRUE false False FALSE
		on On ON off Off OFF ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF <<`) {
		m[w] = true
	}
	return m
}()

var base60 = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// isTimestamp says whether v2 reads plain s as a timestamp: four digits,
// a dash, then one of the layouts it tries.
func isTimestamp(s string) bool {
	if len(s) < 5 || s[4] != '-' {
		return false
	}
	for _, c := range s[:4] {
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, layout := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// The scalar writers fold at a single space once the line is past
// bestWidth (breaks: not for keys), continuing at indent.

func (e *emitter) plain(s []byte, indent int, breaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if breaks && !spaces && e.column > bestWidth && (i+1 >= len(s) || s[i+1] != ' ') {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		e.put(s[i])
		e.indention, spaces = false, false
	}
	e.whitespace, e.indention = false, false
}

func (e *emitter) singleQuoted(s []byte, indent int, breaks bool) {
	e.indicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if breaks && !spaces && e.column > bestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		if s[i] == '\'' {
			e.put('\'')
		}
		e.put(s[i])
		e.indention, spaces = false, false
	}
	e.indicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

func (e *emitter) doubleQuoted(s []byte, indent int, breaks bool) {
	e.indicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			e.put('\\')
			e.put(c)
			spaces = false
		case c == ' ':
			if breaks && !spaces && e.column > bestWidth && i > 0 && i < len(s)-1 {
				e.writeIndent(indent)
				if s[i+1] == ' ' {
					e.put('\\')
				}
			} else {
				e.put(' ')
			}
			spaces = true
		default:
			e.put(c)
			spaces = false
		}
	}
	e.indicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

func compareFields(a, b field) int {
	switch {
	case keyLess(a.key, b.key):
		return -1
	case keyLess(b.key, a.key):
		return 1
	}
	return 0
}

// keyLess is v2's order of string map keys, for ASCII keys (a non-ASCII
// key makes its scalar, and so the document, go to the slow path before
// its order matters): at the first difference, letters sort after
// everything else and among themselves by code; otherwise the runs of
// digits starting there compare as numbers, then by length, then by code.
func keyLess(a, b []byte) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		if al && bl {
			return a[i] < b[i]
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		// A zero after a non-zero digit of the common prefix continues
		// that number: it counts as one more digit, not a leading zero.
		if a[i] == '0' || b[i] == '0' {
			for j := i - 1; j >= 0 && isDigit(a[j]); j-- {
				if a[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai, bi := i, i
		for ; ai < len(a) && isDigit(a[ai]); ai++ {
			an = an*10 + int64(a[ai]-'0')
		}
		for ; bi < len(b) && isDigit(b[bi]); bi++ {
			bn = bn*10 + int64(b[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return a[i] < b[i]
	}
	return len(a) < len(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
