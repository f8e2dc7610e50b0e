package processes

// ListMaxBytes is listMaxBytes, for the tests to lower.
var ListMaxBytes = &listMaxBytes
