module github.com/recurhq/recur/bench

go 1.26.8

require (
	github.com/recurhq/recur v0.0.0-00010101000000-000000000000
	github.com/robfig/cron/v3 v3.0.1
	github.com/teambition/rrule-go v1.8.2
)

replace github.com/recurhq/recur => ../
