module github.com/recurhq/recur

go 1.26.0
