// ScalingModel and PricingModel under QAbstractItemModelTester, on the small
// plan (scaling stops paying after its first point) and the pipeline plan, and on
// copies with a price taken away: an empty cost stays empty; an estimated point says so.
#include "gui/models/scaling_model.h"

#include <QAbstractItemModelTester>
#include <QFont>
#include <QtTest>

#include "gui/models/pricing_model.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"
#include "planner/search/reasons.h"

namespace trainsim::gui::test {

class ScalingModelTest : public QObject {
  Q_OBJECT

 private slots:
  void scalingUnderTester() {
    ScalingModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.stopsPayingRow(), -1);

    const auto small = SmallPlan();
    model.setPlan(small);
    QCOMPARE(model.rowCount(), static_cast<int>(small->scaling.size()));
    // Simulated, the second node gains less than half a node (ZeRO-3's gathers then cross nodes).
    QCOMPARE(small->scaling_stops_paying, 1);
    QCOMPARE(model.stopsPayingRow(), 0);

    const auto plan = PipelinePlan();
    model.setPlan(plan);
    QCOMPARE(model.rowCount(), static_cast<int>(plan->scaling.size()));
    QVERIFY(plan->scaling_stops_paying > 0);
    const int stops = model.stopsPayingRow();
    QVERIFY(stops >= 0);
    QCOMPARE(model.index(stops, ScalingModel::kNodes).data(Qt::UserRole).toInt(),
             plan->scaling_stops_paying);
    for (int r = 0; r < model.rowCount(); ++r) {
      const planner::ScalingPoint& p = plan->scaling[r];
      QCOMPARE(model.index(r, ScalingModel::kNodes).data(Qt::UserRole).toInt(), p.nodes);
      QCOMPARE(model.index(r, ScalingModel::kSamplesPerS).data(Qt::UserRole).toDouble(),
               p.samples_per_s);
      QVERIFY(p.simulated);  // few points: every one simulated
      QVERIFY(!model.index(r, ScalingModel::kSamplesPerS).data().toString().endsWith(" e"));
      QCOMPARE(model.index(r, ScalingModel::kEfficiency).data(Qt::UserRole).toDouble(),
               100 * p.efficiency);
      QCOMPARE(model.index(r, ScalingModel::kCost).data(Qt::UserRole).toDouble(),
               *p.expected_cost_usd);
      QCOMPARE(model.index(r, 0).data(ScalingModel::kStopsPayingRole).toBool(), r == stops);
      QCOMPARE(model.index(r, 0).data(Qt::FontRole).value<QFont>().bold(), r == stops);
      QCOMPARE(model.index(r, ScalingModel::kNote).data().toString().isEmpty(), r != stops);
      // The error band at this node count (the plan has the corpus's bands).
      QVERIFY(p.band && p.band->points > 0);
      QCOMPARE(model.index(r, 0).data(ScalingModel::kBandLowRole).toDouble(),
               p.samples_per_s * p.band->lo);
      QCOMPARE(model.index(r, 0).data(ScalingModel::kBandHighRole).toDouble(),
               p.samples_per_s * p.band->hi);
      QCOMPARE(model.index(r, ScalingModel::kBand).data(Qt::UserRole).toDouble(),
               p.samples_per_s * p.band->lo);
      QVERIFY(model.index(r, ScalingModel::kBand).data().toString().contains('-'));
      QVERIFY(model.index(r, ScalingModel::kBand)
                  .data(Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("measurements")));
    }
    QCOMPARE(model.headerData(ScalingModel::kBand, Qt::Horizontal).toString(),
             QStringLiteral("80% band samples/s"));

    auto unpriced = std::make_shared<planner::Plan>(*plan);
    unpriced->scaling[0].expected_cost_usd.reset();
    unpriced->scaling[0].band.reset();       // planned without error bands
    unpriced->scaling[0].simulated = false;  // beyond kMaxSimulatedScalingPoints: estimated
    model.setPlan(unpriced);
    QVERIFY(model.index(0, ScalingModel::kSamplesPerS).data().toString().endsWith(" e"));
    QVERIFY(!model.index(0, ScalingModel::kCost).data(Qt::UserRole).isValid());
    QVERIFY(!model.index(0, ScalingModel::kCost).data().isValid());
    QVERIFY(!model.index(0, 0).data(ScalingModel::kBandLowRole).isValid());
    QCOMPARE(model.index(0, ScalingModel::kBand).data().toString(), QStringLiteral("-"));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void pricingUnderTester() {
    PricingModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    const auto plan = PipelinePlan();
    model.setCandidate(plan, plan->best);
    const planner::ConfirmedCandidate& best = plan->confirmed[plan->best];
    QCOMPARE(model.rowCount(), static_cast<int>(best.priced.size()));  // all priced on AWS
    QStringList names;
    for (int r = 0; r < model.rowCount(); ++r) {
      const int i = model.index(r, 0).data(PricingModel::kPricedIndexRole).toInt();
      const planner::PricedJob& pj = best.priced[i];
      names << model.index(r, PricingModel::kPricing).data().toString();
      QCOMPARE(model.index(r, PricingModel::kCostMean).data(Qt::UserRole).toDouble(),
               pj.job.cost_usd->mean);
      QCOMPARE(model.index(r, PricingModel::kCostP50).data(Qt::UserRole).toDouble(),
               pj.job.cost_usd->p50);
      QCOMPARE(model.index(r, PricingModel::kCostP90).data(Qt::UserRole).toDouble(),
               pj.job.cost_usd->p90);
      QCOMPARE(model.index(r, PricingModel::kHours).data(Qt::UserRole).toDouble(),
               pj.job.expected_wall_s / 3600);
      QCOMPARE(model.index(r, PricingModel::kTerms).data().toString(),
               QString::fromStdString(planner::DescribeTerms(pj)));
      if (pj.pricing == Pricing::kSpot) {
        QVERIFY(model.index(r, PricingModel::kTerms)
                    .data()
                    .toString()
                    .endsWith(QStringLiteral("interruptions expected")));
      }
    }
    QVERIFY(names.contains(QStringLiteral("spot")));
    QVERIFY(names.contains(QStringLiteral("on-demand")));

    // An option without a price is left out.
    auto unpriced = std::make_shared<planner::Plan>(*plan);
    unpriced->confirmed[plan->best].priced[0].job.cost_usd.reset();
    model.setCandidate(unpriced, plan->best);
    QCOMPARE(model.rowCount(), static_cast<int>(best.priced.size()) - 1);
    QCOMPARE(model.index(0, 0).data(PricingModel::kPricedIndexRole).toInt(), 1);
    model.setCandidate(plan, 99);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.confirmed(), -1);
  }
};

std::unique_ptr<QObject> MakeScalingModelTest() { return std::make_unique<ScalingModelTest>(); }

}  // namespace trainsim::gui::test

#include "scaling_model_test.moc"
