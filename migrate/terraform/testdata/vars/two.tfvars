base  = "https://two.example"
hours = [6, 18]
