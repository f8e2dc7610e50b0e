package tool

import "sync"

// Builtins is every built-in tool, in the order an agent's default tool
// list names them: the one list that config validation (which names an
// agent may list), an agent's defaults and the instructions (which speak
// of the tools the agent has, each in its Guide) read. A new tool is
// added here.
func Builtins() []Tool {
	return []Tool{
		shell{}, processOutput{}, processWrite{}, processWait{}, processKill{}, processList{}, processResize{}, task{}, taskStatus{}, taskSend{}, taskCancel{},
		readFile{}, writeFile{}, editFile{}, multiEdit{}, listDir{}, glob{}, search{},
		webFetch{},
		askUser{}, poll{}, plan{},
	}
}

// BuiltinNames is the names of Builtins, in its order.
func BuiltinNames() []string {
	var out []string
	for _, t := range Builtins() {
		out = append(out, t.Spec().Name)
	}
	return out
}

var byName = sync.OnceValue(func() map[string]Tool {
	m := map[string]Tool{}
	for _, t := range Builtins() {
		m[t.Spec().Name] = t
	}
	return m
})

// Lookup returns the named built-in tool.
func Lookup(name string) (Tool, bool) {
	t, ok := byName()[name]
	return t, ok
}
