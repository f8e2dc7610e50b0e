package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

// openapi.json describes exactly the routes of the table.
func TestOpenAPIDescribesTheRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, rt := range Routes {
		key := strings.ToLower(rt.Method) + " " + rt.Path
		routes[key] = true
		if doc.Paths[rt.Path][strings.ToLower(rt.Method)] == nil {
			t.Errorf("openapi.json lacks %s %s", rt.Method, rt.Path)
		}
	}
	for path, ops := range doc.Paths {
		for op := range ops {
			if op != "parameters" && !routes[op+" "+path] {
				t.Errorf("openapi.json describes %s %s, which the gateway does not serve", op, path)
			}
		}
	}
}
