package background

import "os/exec"

func signalOf(*exec.ExitError) string { return "" }
