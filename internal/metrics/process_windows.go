package metrics

// readProcess reads nothing on Windows: the process's series are left
// out there, as its start time is not.
func readProcess() processStats { return processStats{cpuSeconds: -1, openFDs: -1} }
