def run(target_path):
    with open(target_path, encoding="utf-8") as f:
        return str(len(f.read().split()))
