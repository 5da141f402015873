import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
