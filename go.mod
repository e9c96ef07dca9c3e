module github.com/minca-go/minca

go 1.26
