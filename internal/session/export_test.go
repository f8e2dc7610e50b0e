package session

// Stress is the lock-order stress, for the test outside the package
// that joins the real participants (goals, sub-agents): they import
// session, so a test of the package itself cannot.
var Stress = stress
