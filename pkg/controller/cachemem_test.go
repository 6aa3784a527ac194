package controller

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// scriptyConfigMap is a ConfigMap of 7 data values of 128 KiB each whose
// text names an Envoy Lua entry point in a comment only: no script, and
// named by no policy; each value its own string, as the informer decodes
// them.
func scriptyConfigMap(i int) *unstructured.Unstructured {
	data := map[string]any{}
	for j := 0; j < 7; j++ {
		head := fmt.Sprintf("-- envoy_on_request is mentioned in a comment only (%d/%d)\n", i, j)
		data[fmt.Sprintf("k%d", j)] = head + strings.Repeat("x", 128<<10-len(head))
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("cm%d", i), "namespace": "any", "resourceVersion": "1"}, "data": data}}
}

// luaConfigMap is a ConfigMap holding one Envoy Gateway Lua script of a
// fixture's size, and a few other keys.
func luaConfigMap(i int) *unstructured.Unstructured {
	script := fmt.Sprintf(`-- script %d
function envoy_on_request(request_handle)
  local path = request_handle:headers():get(":path")
  if string.find(path, "^/admin") then
    request_handle:respond({[":status"] = "403"}, "forbidden")
  end
  request_handle:headers():add("x-lua-seen", "yes")
end
function envoy_on_response(response_handle)
  response_handle:headers():add("x-lua-response", "%d")
end
`, i, i)
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": fmt.Sprintf("lua%d", i), "namespace": "any", "resourceVersion": "1"},
		"data":     map[string]any{"lua": script, "README": strings.Repeat("notes ", 40), "version": "3"}}}
}

// issuer is a cert-manager ACME Issuer with its status, as cert-manager
// writes them.
func issuer(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
		"metadata": map[string]any{"name": fmt.Sprintf("le%d", i), "namespace": "any", "resourceVersion": "1", "generation": int64(1),
			"uid": fmt.Sprintf("0b5e6f3a-0000-4000-8000-%012d", i)},
		"spec": map[string]any{"acme": map[string]any{
			"server": "https://acme-v02.api.letsencrypt.org/directory", "email": fmt.Sprintf("team%d@example.com", i),
			"privateKeySecretRef": map[string]any{"name": fmt.Sprintf("le%d-account", i)},
			"solvers": []any{map[string]any{"http01": map[string]any{"gatewayHTTPRoute": map[string]any{
				"parentRefs": []any{map[string]any{"name": "edge", "namespace": "infra", "kind": "Gateway"}}}}}},
		}},
		"status": map[string]any{
			"acme": map[string]any{"uri": fmt.Sprintf("https://acme-v02.api.letsencrypt.org/acme/acct/%d", 100000000+i),
				"lastRegisteredEmail": fmt.Sprintf("team%d@example.com", i)},
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ACMEAccountRegistered",
				"message": "The ACME account was registered with the ACME server", "lastTransitionTime": "2026-11-30T10:00:00Z", "observedGeneration": int64(1)}},
		}}}
}

// xListenerSet is an XListenerSet of two listeners with the status its
// implementation writes.
func xListenerSet(i int) *unstructured.Unstructured {
	cond := func(typ string) any {
		return map[string]any{"type": typ, "status": "True", "reason": typ, "message": "", "lastTransitionTime": "2026-11-30T10:00:00Z", "observedGeneration": int64(1)}
	}
	listener := func(name string, port int64) (any, any) {
		return map[string]any{"name": name, "protocol": "HTTPS", "port": port, "hostname": fmt.Sprintf("%s.team%d.example.com", name, i),
				"tls":           map[string]any{"mode": "Terminate", "certificateRefs": []any{map[string]any{"name": fmt.Sprintf("%s-%d-tls", name, i)}}},
				"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "Same"}}},
			map[string]any{"name": name, "port": port, "attachedRoutes": int64(3),
				"supportedKinds": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}},
				"conditions":     []any{cond("Accepted"), cond("Programmed"), cond("ResolvedRefs")}}
	}
	l1, s1 := listener("api", 443)
	l2, s2 := listener("web", 8443)
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.x-k8s.io/v1alpha1", "kind": "XListenerSet",
		"metadata": map[string]any{"name": fmt.Sprintf("team%d", i), "namespace": "any", "resourceVersion": "1", "generation": int64(1),
			"uid": fmt.Sprintf("0b5e6f3a-0000-4000-8000-%012d", i)},
		"spec":   map[string]any{"parentRef": map[string]any{"name": "edge", "namespace": "infra"}, "listeners": []any{l1, l2}},
		"status": map[string]any{"conditions": []any{cond("Accepted"), cond("Programmed")}, "listeners": []any{s1, s2}}}}
}

// heapPerObject is the heap n objects made by mk keep once the cache's
// transform has run on each (the garbage of the transform collected),
// per object.
func heapPerObject(n int, mk func(int) *unstructured.Unstructured, transform func(any) (any, error)) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := make([]any, n)
	for i := range keep {
		out, err := transform(mk(i))
		if err != nil {
			panic(err)
		}
		keep[i] = out
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// BenchmarkCachedObjectHeap measures the heap the controller's cache keeps
// per object of the kinds it caches transformed: a ConfigMap whose values
// name a Lua entry point without being scripts (7 x 128 KiB, named by no
// policy), a ConfigMap holding a script, a cert-manager Issuer, and an
// XListenerSet (stripped only, as every topology object). Run with
// -benchtime=1x: each iteration builds 200 objects.
func BenchmarkCachedObjectHeap(b *testing.B) {
	for _, tc := range []struct {
		name      string
		mk        func(int) *unstructured.Unstructured
		transform func(any) (any, error)
	}{
		{"ConfigMap-7x128KiB-not-scripts", scriptyConfigMap, TransformHolder},
		{"ConfigMap-Lua-script", luaConfigMap, TransformHolder},
		{"Issuer", issuer, TransformIssuer},
		{"XListenerSet", xListenerSet, TransformStrip},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var per float64
			for b.Loop() {
				per = heapPerObject(200, tc.mk, tc.transform)
			}
			b.ReportMetric(per, "heap-B/object")
		})
	}
}

// The ConfigMap cache keeps no Lua text: a ConfigMap of 7 values of 128
// KiB naming an entry point (scripts or not) keeps a token of a few
// hundred bytes per value, the verdicts of the checks of those that are
// scripts.
func TestTransformHolderKeepsNoLuaText(t *testing.T) {
	for _, u := range []*unstructured.Unstructured{scriptyConfigMap(0), luaConfigMap(0)} {
		out, err := TransformHolder(u.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(out.(*unstructured.Unstructured).Object)
		if len(raw) > 4<<10 || strings.Contains(string(raw), "xxxx") || strings.Contains(string(raw), "request_handle") {
			t.Errorf("%s: %d bytes after TransformHolder, want a few tokens and no text: %.300s", u.GetName(), len(raw), raw)
		}
	}
}
