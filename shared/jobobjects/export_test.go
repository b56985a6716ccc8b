package jobobjects

// SetEventsBudget makes Events read pages of page events and at most budget a call, for tests
// that cannot store a thousand events; the returned func puts them back.
func SetEventsBudget(page, budget int) (restore func()) {
	oldPage, oldBudget := eventsPage, eventsBudget
	eventsPage, eventsBudget = page, budget
	return func() { eventsPage, eventsBudget = oldPage, oldBudget }
}
