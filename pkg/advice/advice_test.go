package advice_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/advice"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// parable reads examples/parable, less the objects named in drop
// ("Kind/name"), plus the objects of extra (YAML).
func parable(t *testing.T, drop []string, extra string) []engine.Object {
	t.Helper()
	objs, probs, err := manifest.Read([]string{"../../examples/parable"}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	objs = slices.DeleteFunc(objs, func(o engine.Object) bool {
		return slices.Contains(drop, o.Object.GetKind()+"/"+o.Object.GetName())
	})
	return append(objs, read(t, extra)...)
}

func read(t *testing.T, yaml string) []engine.Object {
	t.Helper()
	if yaml == "" {
		return nil
	}
	objs, probs, err := manifest.Read([]string{"-"}, strings.NewReader(yaml))
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	return objs
}

func ref(kind, ns, name string) topology.Ref {
	r := topology.Ref{Kind: kind, Namespace: ns, Name: name}
	switch kind {
	case "HTTPRoute", "Gateway", "ListenerSet":
		r.Group = "gateway.networking.k8s.io"
	case "RetryPolicy", "TimeoutPolicy", "BackendTLSPolicy":
		r.Group = "policies.cupcakes.example"
	}
	return r
}

const gwRetries = `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: gw-retries, namespace: infra, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: cupcakes}]
  overrides: {retryOn: ["503"], strategy: patch}
`

const routeRetries = `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: route-retries, namespace: baker, creationTimestamp: "2026-12-01T00:00:00Z"}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: baker}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: sprinkles}
  defaults: {retryOn: ["5xx"], numRetries: 5}
`

// TestIssueExamples checks the three answers of issue 11 word for word.
func TestIssueExamples(t *testing.T) {
	// A route affected by two policies, one of them overriding.
	res := engine.Compute(parable(t, []string{"TimeoutPolicy/baker-timeouts"}, ""), engine.Options{})
	got := advice.Affected(res, ref("HTTPRoute", "baker", "baker"), false)
	want := []string{"HTTPRoute baker/baker is affected by 2 policies: RetryPolicy baker/namespace-retries (numRetries, retryOn), TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"}
	if !slices.Equal(got, want) {
		t.Errorf("route:\n got %q\nwant %q", got, want)
	}

	// A policy whose retryOn a Gateway override beats.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(parable(t, nil, gwRetries))
	a := advice.Policy(in.WhatIf(read(t, routeRetries), nil), ref("RetryPolicy", "baker", "route-retries"), advice.Create)
	for _, w := range []string{
		"RetryPolicy baker/route-retries changes the effective RetryPolicy of 3 Services in baker",
		"RetryPolicy baker/route-retries: retryOn is overridden by RetryPolicy infra/gw-retries on Gateway infra/cupcakes",
	} {
		if !slices.Contains(a.Lines, w) {
			t.Errorf("policy: no line %q in %q", w, a.Lines)
		}
	}
	if a.Refusal != "" {
		t.Errorf("an accepted policy is refused: %s", a.Refusal)
	}

	// A delete.
	in = engine.NewIncremental(engine.Options{})
	in.Compute(parable(t, nil, ""))
	a = advice.Policy(in.WhatIf(nil, []topology.Ref{ref("RetryPolicy", "baker", "namespace-retries")}), ref("RetryPolicy", "baker", "namespace-retries"), advice.Delete)
	if w := "deleting RetryPolicy baker/namespace-retries leaves 3 Services in baker with no RetryPolicy"; len(a.Lines) == 0 || a.Lines[0] != w {
		t.Errorf("delete: got %q, want first %q", a.Lines, w)
	}
	if w := "deleting RetryPolicy baker/namespace-retries also changes the effective RetryPolicy of 1 Service in baker"; !slices.Contains(a.Lines, w) {
		t.Errorf("delete: no line %q in %q", w, a.Lines)
	}
}

// TestRefusals checks what prevention would refuse: a second policy of a
// strategy-none kind on one Service (naming the first), an Invalid policy;
// and that a policy deleted or accepted is never refused.
func TestRefusals(t *testing.T) {
	in := engine.NewIncremental(engine.Options{})
	in.Compute(parable(t, []string{"BackendTLSPolicy/oven-tls-new"}, ""))
	second := `
apiVersion: policies.cupcakes.example/v1
kind: BackendTLSPolicy
metadata: {name: oven-tls-2, namespace: baker, creationTimestamp: "2026-12-02T10:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: oven}]
  hostname: oven.internal
`
	a := advice.Policy(in.WhatIf(read(t, second), nil), ref("BackendTLSPolicy", "baker", "oven-tls-2"), advice.Create)
	if !strings.Contains(a.Refusal, "Conflicted") || !strings.Contains(a.Refusal, "BackendTLSPolicy baker/oven-tls ") {
		t.Errorf("second BackendTLSPolicy: refusal %q does not name the first", a.Refusal)
	}
	invalid := `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: both, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Namespace, name: baker}]
  defaults: {numRetries: 1}
  overrides: {numRetries: 2}
`
	a = advice.Policy(in.WhatIf(read(t, invalid), nil), ref("RetryPolicy", "baker", "both"), advice.Create)
	if !strings.HasPrefix(a.Refusal, "RetryPolicy baker/both would be Invalid: ") {
		t.Errorf("invalid policy: refusal %q", a.Refusal)
	}
	a = advice.Policy(in.WhatIf(nil, []topology.Ref{ref("BackendTLSPolicy", "baker", "oven-tls")}), ref("BackendTLSPolicy", "baker", "oven-tls"), advice.Delete)
	if a.Refusal != "" || !slices.Contains(a.Lines, "deleting BackendTLSPolicy baker/oven-tls leaves 1 Service in baker with no BackendTLSPolicy") {
		t.Errorf("delete: %+v", a)
	}
	notFound := `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: lost, namespace: baker}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: nope}]
  defaults: {numRetries: 1}
`
	a = advice.Policy(in.WhatIf(read(t, notFound), nil), ref("RetryPolicy", "baker", "lost"), advice.Create)
	if a.Refusal != "" || len(a.Lines) != 1 || !strings.Contains(a.Lines[0], "TargetNotFound") || !strings.Contains(a.Lines[0], "nope") {
		t.Errorf("target not found: %+v", a)
	}
	// A target of a kind the caller could not read is not judged: no
	// verdict is warned of (not "would be TargetNotFound"), none refused.
	unread := engine.NewIncremental(engine.Options{Unread: func(r topology.Ref) bool { return r.GroupKind() == topology.KindHTTPRoute }})
	unread.Compute(parable(t, []string{"BackendTLSPolicy/oven-tls-new"}, ""))
	a = advice.Policy(unread.WhatIf(read(t, notFound), nil), ref("RetryPolicy", "baker", "lost"), advice.Create)
	if a.Refusal != "" || len(a.Lines) != 1 || strings.Contains(a.Lines[0], "would be") ||
		a.Lines[0] != "RetryPolicy baker/lost: Policy is not judged: its targets could not be read (HTTPRoute baker/nope)" {
		t.Errorf("target not read: %+v", a)
	}
}

// TestLinesAreCapped checks that a long answer keeps MaxLines lines, the
// last one counting the others and naming the command.
func TestLinesAreCapped(t *testing.T) {
	var extra strings.Builder
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		extra.WriteString("---\napiVersion: policies.cupcakes.example/v1\nkind: TimeoutPolicy\nmetadata: {name: route-" + n + ", namespace: baker}\nspec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: baker}]\n  overrides: {strategy: patch, " + n + "field: 1s}\n")
	}
	res := engine.Compute(parable(t, nil, extra.String()), engine.Options{})
	got := advice.Affected(res, ref("HTTPRoute", "baker", "baker"), false)
	if len(got) == 0 || !strings.HasPrefix(got[0], "HTTPRoute baker/baker is affected by 10 policies: ") {
		t.Fatalf("got %q", got)
	}
	for _, l := range got {
		if len(l) > advice.Width+60 {
			t.Errorf("line of %d characters: %q", len(l), l)
		}
	}
	got = advice.Affected(res, ref("Service", "baker", "oven"), true)
	if len(got) != advice.MaxLines || !strings.HasPrefix(got[0], "deleting Service baker/oven takes it out of the reach of 11 policies: ") ||
		got[len(got)-1] != "... and 2 more: see attache describe service/oven -n baker" {
		t.Errorf("delete of a Service: %q", got)
	}
	if got := advice.Affected(res, ref("Service", "baker", "nope"), false); got != nil {
		t.Errorf("an object not in the state: %q", got)
	}
}

// readmeFiles are the files the READMEs' commands apply.
var readmeFiles = map[string]string{
	"route.yaml": `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: baker, namespace: baker}
`,
	"gw-retries.yaml": gwRetries,
	"retries.yaml":    routeRetries,
	"oven-tls-new.yaml": `
apiVersion: policies.cupcakes.example/v1
kind: BackendTLSPolicy
metadata: {name: oven-tls-new, namespace: baker, creationTimestamp: "2026-11-20T10:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: oven}]
  hostname: oven.internal
`,
}

// TestReadmeWarnings replays the kubectl commands that README.md and
// deploy/README.md show in their console blocks, in order, on the parable
// without baker-timeouts and oven-tls-new (as both say): each command's
// "Warning: " lines must be what the webhook says to it (the same lines,
// in the same order) on the state the commands before it left, and a
// denial its refusal. A command is applied unless it is a dry run or
// denied. TestWebhook checks the same lines through the API server.
func TestReadmeWarnings(t *testing.T) {
	shown := 0
	for _, file := range []string{"../../README.md", "../../deploy/README.md"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		objs := parable(t, []string{"TimeoutPolicy/baker-timeouts", "BackendTLSPolicy/oven-tls-new"}, "")
		in := engine.NewIncremental(engine.Options{})
		res := in.Compute(objs)
		var (
			cmd       string
			said      advice.Answer
			warned    []string
			denied    string
			apply     []engine.Object
			remove    topology.Ref
			inConsole bool
		)
		// done checks the command read so far and applies it.
		done := func() {
			if cmd == "" {
				return
			}
			if !slices.Equal(warned, said.Lines) {
				t.Errorf("%s: %q:\n shows %q\n  says %q", file, cmd, warned, said.Lines)
			}
			if denied != "" && (said.Refusal == "" || !strings.HasPrefix(denied, said.Refusal+" (attache prevents this for ")) {
				t.Errorf("%s: %q: shows the denial %q, the refusal is %q", file, cmd, denied, said.Refusal)
			}
			if denied == "" && !strings.Contains(cmd, "--dry-run") {
				objs = slices.DeleteFunc(objs, func(o engine.Object) bool {
					r := ref(o.Object.GetKind(), o.Object.GetNamespace(), o.Object.GetName())
					if r == remove {
						return true
					}
					for _, a := range apply {
						if r == ref(a.Object.GetKind(), a.Object.GetNamespace(), a.Object.GetName()) {
							return true
						}
					}
					return false
				})
				objs = append(objs, apply...)
				res = in.Compute(objs)
			}
			shown += len(warned)
			if denied != "" {
				shown++
			}
			cmd, warned, denied, apply, remove = "", nil, "", nil, topology.Ref{}
		}
		lines := strings.Split(string(data), "\n")
		for i, l := range lines {
			switch {
			case l == "```console":
				// A block of the webhook's: one showing what it says.
				end := i + slices.Index(lines[i:], "```")
				inConsole = slices.ContainsFunc(lines[i:end], func(l string) bool {
					return strings.HasPrefix(l, "Warning: ") || strings.Contains(l, "denied the request: ")
				})
				continue
			case inConsole && l == "```":
				done()
				inConsole = false
				continue
			case !inConsole:
				continue
			}
			if c, ok := strings.CutPrefix(l, "$ "); ok {
				done()
				cmd = c
				said = answer(t, in, res, c, &apply, &remove)
				continue
			}
			if w, ok := strings.CutPrefix(l, "Warning: "); ok {
				warned = append(warned, w)
			}
			if _, d, ok := strings.Cut(l, `denied the request: `); ok {
				denied = d
			}
		}
	}
	if shown < 10 {
		t.Errorf("only %d webhook lines found in the READMEs", shown)
	}
}

// answer is what the webhook says to a kubectl command of the READMEs, and
// the change the command makes.
func answer(t *testing.T, in *engine.Incremental, res *engine.Result, cmd string, apply *[]engine.Object, remove *topology.Ref) advice.Answer {
	t.Helper()
	f := strings.Fields(cmd)
	switch {
	case len(f) == 4 && f[1] == "apply" && f[2] == "-f":
		doc, ok := readmeFiles[f[3]]
		if !ok {
			t.Fatalf("%q: no file %s in readmeFiles", cmd, f[3])
		}
		objs := read(t, doc)
		u := objs[0].Object
		r := ref(u.GetKind(), u.GetNamespace(), u.GetName())
		if u.GetKind() == "HTTPRoute" {
			return advice.Answer{Lines: advice.Affected(res, r, false)} // an update: the route is there
		}
		*apply = objs
		return advice.Policy(in.WhatIf(objs, nil), r, advice.Create)
	case len(f) >= 6 && f[1] == "label" && f[2] == "httproute" && f[4] == "-n":
		return advice.Answer{Lines: advice.Affected(res, ref("HTTPRoute", f[5], f[3]), false)}
	case len(f) >= 6 && f[1] == "delete" && f[2] == "retrypolicy" && f[4] == "-n":
		*remove = ref("RetryPolicy", f[5], f[3])
		return advice.Policy(in.WhatIf(nil, []topology.Ref{*remove}), *remove, advice.Delete)
	}
	t.Fatalf("a README shows %q: TestReadmeWarnings cannot replay it", cmd)
	return advice.Answer{}
}

// TestCreated: a route being created is told which policies will reach
// it: the namespace's and the Gateway's (with their fields and stanza),
// and a policy already naming it; not one on another route, nor a kind
// whose hierarchy has no routes, nor one on another Gateway. Another
// kind is told of the policies naming it.
func TestCreated(t *testing.T) {
	in := parable(t, nil, `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: for-the-new-route, namespace: baker}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: muffins}]
  defaults: {numRetries: 1}
`)
	res := engine.Compute(in, engine.Options{})
	route := read(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: muffins, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
  rules: [{backendRefs: [{name: baker, port: 8080}]}]
`)[0].Object
	got := advice.Created(res, route, ref("HTTPRoute", "baker", "muffins"), nil)
	want := []string{"HTTPRoute baker/muffins will be reached by 3 policies: RetryPolicy baker/for-the-new-route (numRetries), RetryPolicy baker/namespace-retries (numRetries, retryOn)",
		"HTTPRoute baker/muffins will also be reached by: TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"}
	if !slices.Equal(got, want) {
		t.Errorf("Created:\n got %q\nwant %q", got, want)
	}
	// Attached to no known Gateway, in a namespace without policies: nothing.
	other := route.DeepCopy()
	other.SetNamespace("elsewhere")
	unstructured.SetNestedSlice(other.Object, []any{map[string]any{"name": "nowhere"}}, "spec", "parentRefs")
	if got := advice.Created(res, other, ref("HTTPRoute", "elsewhere", "muffins"), nil); got != nil {
		t.Errorf("a route under no policy: %q", got)
	}
	// Another kind: the policies naming it. A Service named by a
	// BackendTLSPolicy before it exists; the Namespace's own policy does
	// not count for a Service (it reaches Services through routes).
	svc := read(t, `
apiVersion: v1
kind: Service
metadata: {name: icing, namespace: baker}
`)[0].Object
	res = engine.Compute(append(in, read(t, `
apiVersion: policies.cupcakes.example/v1
kind: BackendTLSPolicy
metadata: {name: icing-tls, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Service, name: icing}]
  hostname: icing.baker.svc
`)...), engine.Options{})
	want = []string{"Service baker/icing will be reached by 1 policy: BackendTLSPolicy baker/icing-tls (hostname)"}
	if got := advice.Created(res, svc, ref("Service", "baker", "icing"), nil); !slices.Equal(got, want) {
		t.Errorf("a Service:\n got %q\nwant %q", got, want)
	}
	if got := advice.Created(res, svc, ref("Service", "baker", "plain"), nil); got != nil {
		t.Errorf("a Service no policy names: %q", got)
	}

	// A Service a route's rule already names as its backend: what is
	// attached to that rule, its route and above, not to another rule.
	in = parable(t, nil, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: muffins, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
  rules:
  - {name: icing, backendRefs: [{name: icing, port: 8080}]}
  - {name: other, backendRefs: [{name: baker, port: 8080}]}
---
apiVersion: policies.cupcakes.example/v1
kind: TimeoutPolicy
metadata: {name: icing-timeouts, namespace: baker}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: muffins, sectionName: icing}]
  request: 5s
---
apiVersion: policies.cupcakes.example/v1
kind: TimeoutPolicy
metadata: {name: other-timeouts, namespace: baker}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: muffins, sectionName: other}]
  request: 7s
`)
	res = engine.Compute(in, engine.Options{})
	rule := ref("HTTPRoute", "baker", "muffins").WithSection("icing")
	want = []string{"Service baker/icing will be reached by 3 policies: RetryPolicy baker/namespace-retries (numRetries, retryOn), TimeoutPolicy baker/icing-timeouts (request)",
		"Service baker/icing will also be reached by: TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"}
	if got := advice.Created(res, svc, ref("Service", "baker", "icing"), []topology.Ref{rule}); !slices.Equal(got, want) {
		t.Errorf("a Service a rule names:\n got %q\nwant %q", got, want)
	}
}

// TestPolicyLines checks the other forms of a policy's answer: fields
// beaten in part, and by whom; a policy rejected in one context of two by
// an established strategy-none policy (one line naming it, not one more per
// field it loses there); another policy whose status would change; a
// change that cannot be assessed.
func TestPolicyLines(t *testing.T) {
	in := engine.NewIncremental(engine.Options{})
	if a := advice.Policy(in.WhatIf(read(t, routeRetries), nil), ref("RetryPolicy", "baker", "route-retries"), advice.Create); !slices.Equal(a.Lines,
		[]string{"RetryPolicy baker/route-retries: impact not assessed: no computation yet"}) {
		t.Errorf("before any computation: %q", a.Lines)
	}
	in.Compute(parable(t, nil, ""))
	beaten := `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: ns2, namespace: baker, creationTimestamp: "2026-12-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Namespace, name: baker}]
  defaults: {numRetries: 9, perTryTimeout: 1s}
`
	a := advice.Policy(in.WhatIf(read(t, beaten), nil), ref("RetryPolicy", "baker", "ns2"), advice.Create)
	if want := []string{
		"RetryPolicy baker/ns2 changes the effective RetryPolicy of 3 Services in baker",
		"RetryPolicy baker/ns2: numRetries, perTryTimeout are replaced by RetryPolicy baker/frosting-retries on HTTPRoute baker/frosting",
	}; !slices.Equal(a.Lines, want) || a.Refusal != "" {
		t.Errorf("beaten in part:\n got %q (refusal %q)\nwant %q", a.Lines, a.Refusal, want)
	}
	two := `
apiVersion: policies.cupcakes.example/v1
kind: BackendTLSPolicy
metadata: {name: two, namespace: baker, creationTimestamp: "2026-12-09T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: oven}, {group: "", kind: Service, name: baker}]
  hostname: two.internal
`
	a = advice.Policy(in.WhatIf(read(t, two), nil), ref("BackendTLSPolicy", "baker", "two"), advice.Create)
	if !slices.Contains(a.Lines, "BackendTLSPolicy baker/two is rejected where BackendTLSPolicy baker/oven-tls on Service baker/oven is established (merge strategy none)") ||
		slices.ContainsFunc(a.Lines, func(l string) bool { return strings.Contains(l, "hostname") }) || a.Refusal != "" {
		t.Errorf("rejected in one context: %q (refusal %q)", a.Lines, a.Refusal)
	}
	del := ref("BackendTLSPolicy", "baker", "oven-tls")
	a = advice.Policy(in.WhatIf(nil, []topology.Ref{del}), del, advice.Delete)
	if !slices.Contains(a.Lines, "BackendTLSPolicy baker/oven-tls-new would go from Conflicted to Accepted, Programmed") {
		t.Errorf("another policy's status: %q", a.Lines)
	}

	// A long answer: four lines, then how many more and where to see
	// them (for a change: describe, or impact of the file).
	lost := `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: lost, namespace: baker}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: baker}
`
	for i := range 6 {
		lost += fmt.Sprintf("  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: nope-%d}\n", i)
	}
	lost += "  defaults: {numRetries: 1}\n"
	a = advice.Policy(in.WhatIf(read(t, lost), nil), ref("RetryPolicy", "baker", "lost"), advice.Create)
	if len(a.Lines) != advice.MaxLines || a.Lines[4] != "... and 3 more: see attache describe retrypolicy/lost -n baker (or attache impact --apply FILE)" ||
		!strings.Contains(a.Lines[1], "TargetNotFound") {
		t.Errorf("a long answer: %q", a.Lines)
	}
}

// TestLinesFit checks that no line is longer than MaxWidth (a status
// message is cut, the refusal keeps it whole) or holds a control
// character, which would make the API server drop the warning.
func TestLinesFit(t *testing.T) {
	in := engine.NewIncremental(engine.Options{})
	in.Compute(parable(t, nil, ""))
	long := strings.Repeat("a-long-name-", 8) + "x"
	invalid := `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: ` + long + `, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Namespace, name: baker}]
  defaults: {numRetries: 1}
  overrides: {numRetries: 2}
`
	a := advice.Policy(in.WhatIf(read(t, invalid), nil), ref("RetryPolicy", "baker", long), advice.Create)
	if len(a.Lines) != 1 || !strings.HasPrefix(a.Lines[0], "RetryPolicy baker/"+long+" would be Invalid: ") || !strings.HasSuffix(a.Lines[0], " ...") {
		t.Errorf("a long status message: %q", a.Lines)
	}
	if !strings.HasPrefix(a.Refusal, "RetryPolicy baker/"+long+" would be Invalid: ") || !strings.HasSuffix(a.Refusal, "one merge strategy (one stanza)") {
		t.Errorf("the refusal is not whole: %q", a.Refusal)
	}
	tab := `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: tabs, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Namespace, name: baker}]
  defaults: {"num\tRetries": 1, "line\nbreak": 2}
`
	res := engine.Compute(append(parable(t, nil, ""), read(t, tab)...), engine.Options{})
	route := read(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: muffins, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
`)[0].Object
	lines := advice.Created(res, route, ref("HTTPRoute", "baker", "muffins"), nil)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "RetryPolicy baker/tabs (line break, num Retries)") }) {
		t.Errorf("a field name with control characters: %q", lines)
	}
	for _, l := range append(lines, a.Lines...) {
		if n := len([]rune(l)); n > advice.MaxWidth || strings.ContainsAny(l, "\t\n") {
			t.Errorf("line of %d characters: %q", n, l)
		}
	}
}

// TestAffectedKinds checks the answer to the other kinds a policy can
// affect: a Namespace, a Gateway, a Service, applied and deleted (a
// deletion's continuation line says so too), and a ListenerSet.
func TestAffectedKinds(t *testing.T) {
	res := engine.Compute(parable(t, []string{"TimeoutPolicy/baker-timeouts", "BackendTLSPolicy/oven-tls-new"}, ""), engine.Options{})
	ns := topology.Ref{Kind: "Namespace", Name: "baker"}
	for _, c := range []struct {
		ref      topology.Ref
		deleting bool
		want     []string
	}{
		{ns, false, []string{
			"Namespace baker is affected by 3 policies: RetryPolicy baker/frosting-retries (retryOn), RetryPolicy baker/namespace-retries (numRetries, retryOn)",
			"Namespace baker is also affected by: TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"}},
		{ns, true, []string{
			"deleting Namespace baker takes it out of the reach of 3 policies: RetryPolicy baker/frosting-retries (retryOn), RetryPolicy baker/namespace-retries (numRetries, retryOn)",
			"deleting Namespace baker also takes it out of the reach of: TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)",
			"deleting Namespace baker changes the effective policies of 4 Services in baker below it (their paths through it go)"}},
		{ref("Gateway", "infra", "cupcakes"), true, []string{
			"deleting Gateway infra/cupcakes takes it out of the reach of 3 policies: RetryPolicy baker/frosting-retries (retryOn), RetryPolicy baker/namespace-retries (numRetries, retryOn)",
			"deleting Gateway infra/cupcakes also takes it out of the reach of: TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)",
			"deleting Gateway infra/cupcakes changes the effective policies of 4 Services in baker below it (their paths through it go)"}},
		{topology.Ref{Kind: "Service", Namespace: "baker", Name: "oven"}, false, []string{
			"Service baker/oven is affected by 3 policies: BackendTLSPolicy baker/oven-tls (caCertificateRefs, hostname), RetryPolicy baker/namespace-retries (numRetries, retryOn)",
			"Service baker/oven is also affected by: TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"}},
	} {
		if got := advice.Affected(res, c.ref, c.deleting); !slices.Equal(got, c.want) {
			t.Errorf("%s (deleting %v):\n got %q\nwant %q", c.ref, c.deleting, got, c.want)
		}
	}

	// A ListenerSet, and the route on its listener.
	res = engine.Compute(parable(t, []string{"TimeoutPolicy/baker-timeouts", "BackendTLSPolicy/oven-tls-new", "Gateway/cupcakes"}, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: cupcakes, namespace: infra}
spec:
  gatewayClassName: cupcakes
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: baker}
spec:
  parentRef: {name: cupcakes, namespace: infra}
  listeners: [{name: alt, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: alt, namespace: baker}
spec:
  parentRefs: [{kind: ListenerSet, name: extra}]
  rules: [{backendRefs: [{name: oven, port: 8080}]}]
`), engine.Options{})
	want := []string{"ListenerSet baker/extra is affected by 2 policies: RetryPolicy baker/namespace-retries (numRetries, retryOn), TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"}
	if got := advice.Affected(res, ref("ListenerSet", "baker", "extra"), false); !slices.Equal(got, want) {
		t.Errorf("a ListenerSet:\n got %q\nwant %q", got, want)
	}
}
