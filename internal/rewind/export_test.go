package rewind

// ListMaxFiles and ListMaxBytes are listMaxFiles and listMaxBytes, for
// the tests to lower.
var ListMaxFiles, ListMaxBytes = &listMaxFiles, &listMaxBytes
