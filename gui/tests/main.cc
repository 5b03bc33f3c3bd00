// gui_tests: every QtTest class of the GUI in one executable, run with
// QT_QPA_PLATFORM=offscreen by ctest. `gui_tests <Class>` runs one class;
// other arguments go to QTest (gui_tests ModelTest -v2).
#include <QApplication>
#include <QtTest>
#include <memory>
#include <vector>

#include "gui/tests/tests.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QString only;
  std::vector<char*> args(argv, argv + argc);
  if (args.size() > 1 && args[1][0] != '-') {
    only = QString::fromLocal8Bit(args[1]);
    args.erase(args.begin() + 1);
  }
  std::vector<std::unique_ptr<QObject>> tests = trainsim::gui::test::AllTests();
  int failed = 0;
  for (const std::unique_ptr<QObject>& t : tests) {
    if (!only.isEmpty() &&
        only !=
            QString::fromLatin1(t->metaObject()->className()).section(QStringLiteral("::"), -1)) {
      continue;
    }
    failed += QTest::qExec(t.get(), static_cast<int>(args.size()), args.data());
  }
  return failed == 0 ? 0 : 1;
}
