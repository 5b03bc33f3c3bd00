// End to end under the offscreen platform: the window plans the small
// scenario on its worker thread, fills the table and the chart, and a click
// on a chart point selects the table row (and a selected row highlights its
// points). Then a screenshot of the planned window.
#include "gui/app/main_window.h"

#include <QAction>
#include <QDir>
#include <QGraphicsSceneMouseEvent>
#include <QItemSelectionModel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTextEdit>
#include <QTimer>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtTest>

#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

namespace {

int SelectedSourceRow(const MainWindow& w) {
  const QModelIndexList rows = w.planPage()->tableView()->selectionModel()->selectedRows();
  if (rows.size() != 1) return -1;
  return w.planPage()->proxy()->mapToSource(rows.first()).row();
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  // A modified scenario asks before New and before the window closes: Cancel keeps it,
  // Discard goes on (the question box answered as a user would, from a timer).
  void unsavedChangesAskFirst() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(SmallScenarioPath()));
    const QString edited = w.document()->text() + QStringLiteral(" ");
    w.document()->setText(edited);
    QVERIFY(w.document()->modified());
    auto answer = [](QMessageBox::StandardButton button) {
      QTimer::singleShot(0, [button] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        QVERIFY(box);
        QVERIFY(box->text().startsWith(QStringLiteral("Discard the unsaved changes to")));
        box->button(button)->click();
      });
    };
    answer(QMessageBox::Cancel);
    w.scenarioPage()->newAction()->trigger();
    QCOMPARE(w.document()->text(), edited);  // kept
    answer(QMessageBox::Cancel);
    QVERIFY(!w.close());
    QVERIFY(w.isVisible());
    answer(QMessageBox::Discard);
    w.scenarioPage()->newAction()->trigger();
    QVERIFY(w.document()->text() != edited);  // a new scenario
    QVERIFY(!w.document()->modified());
    QVERIFY(w.close());  // nothing to lose: no question
  }

  void plansAndLinksTableAndChart() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!w.planAction()->isEnabled());
    QVERIFY(w.openScenario(SmallScenarioPath()));
    QVERIFY(w.planAction()->isEnabled());
    QSignalSpy shown(&w, &MainWindow::planShown);
    w.planAction()->trigger();
    QVERIFY(w.planning());
    QVERIFY(w.cancelAction()->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QVERIFY(!w.planning());
    QVERIFY(w.planAction()->isEnabled());

    const auto plan = w.planPage()->candidates()->plan();
    QVERIFY(plan);
    QTRY_COMPARE_WITH_TIMEOUT(w.planPage()->tableView()->model()->rowCount(),
                              static_cast<int>(plan->confirmed.size()), 5000);
    // The recommendation is row 0 of the view, and selected.
    const QModelIndex first =
        w.planPage()->proxy()->mapToSource(w.planPage()->proxy()->index(0, 0));
    QCOMPARE(first.row(), w.planPage()->candidates()->recommendedRow());
    QVERIFY(first.data(CandidateTableModel::kRecommendedRole).toBool());
    QCOMPARE(SelectedSourceRow(w), w.planPage()->candidates()->recommendedRow());
    QVERIFY(!w.planPage()->reasons()->toPlainText().isEmpty());

    // The chart shows the front and every priced option.
    QCOMPARE(w.planPage()->frontSeries()->count(), static_cast<int>(plan->pareto.size()));
    QCOMPARE(w.planPage()->optionsSeries()->count(),
             w.planPage()->pareto()->pointCount(ParetoModel::kAllOptions));
    // Each front point has its error bars: a cross through it from P10 to P90.
    QCOMPARE(static_cast<int>(w.planPage()->errorBars().size()),
             w.planPage()->frontSeries()->count());
    for (int i = 0; i < w.planPage()->frontSeries()->count(); ++i) {
      const QLineSeries* bar = w.planPage()->errorBars()[i];
      const QRectF s = w.planPage()->pareto()->spread(ParetoModel::kFront, i);
      QCOMPARE(bar->count(), 5);
      QCOMPARE(bar->at(0), QPointF(s.left(), w.planPage()->frontSeries()->at(i).y()));
      QCOMPARE(bar->at(4), QPointF(w.planPage()->frontSeries()->at(i).x(), s.bottom()));
    }

    // The selected row's front points are highlighted.
    for (int i : w.planPage()->pareto()->pointsOfRow(ParetoModel::kFront, SelectedSourceRow(w)))
      QVERIFY(w.planPage()->frontSeries()->isPointSelected(i));

    // Click a front point of another row: the table follows.
    int target = -1;
    for (int i = 0; i < w.planPage()->frontSeries()->count(); ++i) {
      if (w.planPage()->pareto()->candidateRow(ParetoModel::kFront, i) != SelectedSourceRow(w))
        target = i;
    }
    if (target < 0) {  // the whole front is the recommendation: clear, then click
      w.planPage()->tableView()->clearSelection();
      target = 0;
    }
    QChart* chart = w.planPage()->chartView()->chart();
    const QPointF at =
        chart->mapToPosition(w.planPage()->frontSeries()->at(target), w.planPage()->frontSeries());
    const QPoint click = w.planPage()->chartView()->mapFromScene(chart->mapToScene(at));
    QSignalSpy clicked(w.planPage()->frontSeries(), &QXYSeries::clicked);
    QTest::mouseClick(w.planPage()->chartView()->viewport(), Qt::LeftButton, {}, click);
    QTRY_COMPARE_WITH_TIMEOUT(clicked.count(), 1, 2000);
    const int row = w.planPage()->pareto()->candidateRow(ParetoModel::kFront, target);
    QTRY_COMPARE_WITH_TIMEOUT(SelectedSourceRow(w), row, 2000);
    QVERIFY(w.planPage()->frontSeries()->isPointSelected(target));

    // And the other way: selecting a row in the (sorted) table highlights its points.
    w.planPage()->tableView()->sortByColumn(CandidateTableModel::kCost, Qt::DescendingOrder);
    w.planPage()->tableView()->selectRow(0);
    const int selected = SelectedSourceRow(w);
    QVERIFY(selected >= 0);
    for (int i = 0; i < w.planPage()->frontSeries()->count(); ++i) {
      QCOMPARE(w.planPage()->frontSeries()->isPointSelected(i),
               w.planPage()->pareto()->candidateRow(ParetoModel::kFront, i) == selected);
    }
    QVERIFY(!w.planPage()->pareto()->pointsOfRow(ParetoModel::kAllOptions, selected).empty());
    for (int i : w.planPage()->pareto()->pointsOfRow(ParetoModel::kAllOptions, selected))
      QVERIFY(w.planPage()->optionsSeries()->isPointSelected(i));
  }

  void cancelStopsThePlan() {
    MainWindow w;
    QVERIFY(w.openScenario(SmallScenarioPath()));
    QSignalSpy failed(&w, &MainWindow::planFailed);
    QSignalSpy shown(&w, &MainWindow::planShown);
    w.startPlan();
    w.cancelAction()->trigger();
    // The small plan may finish before the cancel lands; either way the window is idle after.
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() + shown.count() == 1, 60000);
    if (failed.count() == 1) {
      QVERIFY(failed.at(0).at(0).toString().endsWith(QStringLiteral("planning cancelled")));
      QCOMPARE(w.planPage()->tableView()->model()->rowCount(), 0);
    }
    QVERIFY(!w.planning());
    QVERIFY(w.planAction()->isEnabled());
    QVERIFY(!w.cancelAction()->isEnabled());
  }

  void screenshot() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(SmallScenarioPath()));
    QSignalSpy shown(&w, &MainWindow::planShown);
    w.startPlan();
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QTest::qWait(100);  // let the chart lay out
    QCOMPARE(SaveScreenshot(w, QStringLiteral("plan")), QString());
  }
};

std::unique_ptr<QObject> MakeMainWindowTest() { return std::make_unique<MainWindowTest>(); }

}  // namespace trainsim::gui::test

#include "main_window_test.moc"
