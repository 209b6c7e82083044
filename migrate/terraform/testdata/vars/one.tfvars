url  = "https://one.example/run"
base = "https://one.example"
rg   = "from-one"
