// CandidateTableModel (directly and through a sorting proxy) and ParetoModel
// under QAbstractItemModelTester, before and after a plan is loaded.
#include <QAbstractItemModelTester>
#include <QFont>
#include <QSortFilterProxyModel>
#include <QtTest>
#include <set>

#include "gui/models/candidate_table_model.h"
#include "gui/models/pareto_model.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

class ModelTest : public QObject {
  Q_OBJECT

 private slots:
  void candidateTableUnderTester() {
    CandidateTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(CandidateTableModel::kSortRole);
    QAbstractItemModelTester proxy_tester(&proxy,
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(CandidateTableModel::kColumnCount));
    QCOMPARE(model.recommendedRow(), -1);

    const auto plan = SmallPlan();
    model.setPlan(plan);
    QCOMPARE(model.rowCount(), static_cast<int>(plan->confirmed.size()));
    QCOMPARE(model.recommendedRow(), 0);
    QVERIFY(model.data(model.index(0, 0), Qt::FontRole).value<QFont>().bold());
    QVERIFY(model.data(model.index(0, CandidateTableModel::kRank))
                .toString()
                .endsWith(QStringLiteral("\u2605")));
    const planner::ConfirmedCandidate& best = plan->confirmed[plan->best];
    QCOMPARE(model.data(model.index(0, CandidateTableModel::kInstance)).toString(),
             QString::fromStdString(plan->space.instances[best.candidate.instance]->name));
    QCOMPARE(model.data(model.index(0, CandidateTableModel::kHours), Qt::UserRole).toDouble(),
             best.priced[best.best_priced].job.expected_wall_s / 3600);
    QCOMPARE(model.data(model.index(0, CandidateTableModel::kNodes), Qt::UserRole).typeId(),
             QMetaType::Int);
    // The step's error band, with the plan worker's bands (the small plan has them: the
    // built-in file), and where it comes from in the tooltip.
    QCOMPARE(model.headerData(CandidateTableModel::kStepBand, Qt::Horizontal).toString(),
             QStringLiteral("80% band s"));
    QVERIFY(best.band.has_value());
    QVERIFY(model.data(model.index(0, CandidateTableModel::kStepBand)).toString().contains('-'));
    QVERIFY(model.data(model.index(0, CandidateTableModel::kStepBand), Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("published measurements")));
    // Each row's shard group: the hybrid group, or "all" for the whole DP group.
    QCOMPARE(model.headerData(CandidateTableModel::kShardGroup, Qt::Horizontal).toString(),
             QStringLiteral("shard group"));
    for (int r = 0; r < model.rowCount(); ++r) {
      const int g = plan->confirmed[model.confirmedOfRow(r)].candidate.shard_group;
      QCOMPARE(model.data(model.index(r, CandidateTableModel::kShardGroup)).toString(),
               g > 0 ? QString::number(g) : QStringLiteral("all"));
      QCOMPARE(model.data(model.index(r, CandidateTableModel::kShardGroup), Qt::UserRole).toInt(),
               g);
    }

    // Expert parallelism: 1 in a dense model's plan.
    QCOMPARE(model.headerData(CandidateTableModel::kEp, Qt::Horizontal).toString(),
             QStringLiteral("EP"));
    QCOMPARE(model.data(model.index(0, CandidateTableModel::kEp)).toInt(), 1);
    const int cp = CandidateTableModel::kFirstStrategy + StrategyIndex(kContextParallel);
    QCOMPARE(model.headerData(cp, Qt::Horizontal).toString(), QStringLiteral("CP"));
    QCOMPARE(model.data(model.index(0, cp)).toInt(), 1);

    // Sorting by cost goes by the number, not the text.
    proxy.sort(CandidateTableModel::kCost, Qt::AscendingOrder);
    for (int r = 1; r < proxy.rowCount(); ++r) {
      QVERIFY(proxy.index(r - 1, CandidateTableModel::kCost).data(Qt::UserRole).toDouble() <=
              proxy.index(r, CandidateTableModel::kCost).data(Qt::UserRole).toDouble());
    }
    proxy.sort(CandidateTableModel::kStepSeconds, Qt::DescendingOrder);
    for (int r = 1; r < proxy.rowCount(); ++r) {
      QVERIFY(proxy.index(r - 1, CandidateTableModel::kStepSeconds).data(Qt::UserRole).toDouble() >=
              proxy.index(r, CandidateTableModel::kStepSeconds).data(Qt::UserRole).toDouble());
    }
    model.setPlan(plan);  // a reset while sorted
    model.clear();
    QCOMPARE(proxy.rowCount(), 0);
  }

  void paretoUnderTester() {
    ParetoModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    const auto plan = SmallPlan();
    model.setPlan(plan);
    QVERIFY(!plan->pareto.empty());
    QCOMPARE(model.pointCount(ParetoModel::kFront), static_cast<int>(plan->pareto.size()));
    size_t options = 0;
    for (const auto& c : plan->confirmed) options += c.priced.size();
    QCOMPARE(model.pointCount(ParetoModel::kAllOptions), static_cast<int>(options));
    QCOMPARE(model.rowCount(),
             model.pointCount(ParetoModel::kFront) + model.pointCount(ParetoModel::kAllOptions));
    CandidateTableModel table;
    table.setPlan(plan);
    for (int i = 0; i < model.pointCount(ParetoModel::kFront); ++i) {
      const auto [c, p] = plan->pareto[i];
      QCOMPARE(model.candidateRow(ParetoModel::kFront, i), table.rowOfConfirmed(c));
      const planner::PricedJob& pj = plan->confirmed[c].priced[p];
      QCOMPARE(model.point(ParetoModel::kFront, i),
               QPointF(pj.job.expected_wall_s / 3600, pj.job.cost_usd->mean));
      QCOMPARE(model.index(i, ParetoModel::kHours).data(ParetoModel::kCandidateRowRole).toInt(),
               table.rowOfConfirmed(c));
      // Its error bars: the Monte-Carlo's P10-P90 of hours and of cost.
      const QRectF s = model.spread(ParetoModel::kFront, i);
      QCOMPARE(s.left(), pj.job.wall_s.p10 / 3600);
      QCOMPARE(s.right(), pj.job.wall_s.p90 / 3600);
      QCOMPARE(s.top(), pj.job.cost_usd->p10);
      QCOMPARE(s.bottom(), pj.job.cost_usd->p90);
      QVERIFY(s.left() < s.right());  // the model's error spreads even on-demand jobs
      QCOMPARE(model.index(i, ParetoModel::kHoursP90).data(ParetoModel::kSortRole).toDouble(),
               s.right());
      QCOMPARE(model.index(i, ParetoModel::kCostP10).data(ParetoModel::kSortRole).toDouble(),
               s.top());
    }
    // Every row has its points among all the options.
    std::set<int> rows;
    for (int i = 0; i < model.pointCount(ParetoModel::kAllOptions); ++i)
      rows.insert(model.candidateRow(ParetoModel::kAllOptions, i));
    QCOMPARE(static_cast<int>(rows.size()), table.rowCount());
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }
};

std::unique_ptr<QObject> MakeModelTest() { return std::make_unique<ModelTest>(); }

}  // namespace trainsim::gui::test

#include "model_test.moc"
