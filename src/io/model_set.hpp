#pragma once
// The models directory as editable documents: what `topsim calibrate` solves and writes back.
// Constants are addressed by id ("nccl:ampere.nvlink_efficiency"); values keep the unit they
// are written in, and files are written in their canonical layout (2-space JSON, key order kept).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/catalog.hpp"
#include "model/provenance.hpp"

namespace topsim {

class ModelSet {
 public:
  /// Every *.json of the directory, checked as load_catalog() checks them.
  static ModelSet load(const std::string& models_dir);
  ModelSet(const ModelSet& other);
  ModelSet& operator=(const ModelSet& other);
  ~ModelSet();

  /// Every parameter whose source is an assumption, a fitted or a carried constant, in file,
  /// model and parameter order.
  const std::vector<ModelConstant>& constants() const;
  /// nullptr when no constant has this id.
  const ModelConstant* find(const std::string& id) const;

  /// Sets a value (in its written unit), rounded to `kSignificantDigits` as it will be written.
  void set_value(const std::string& id, double value);
  /// Writes a fitted constant's provenance: the rows that pin it, how, and the residual.
  void set_solution(const std::string& id, const std::vector<std::string>& rows, const std::string& method,
                    double residual);

  /// Writes one group of kernel-model constants of an architecture (models/compute.json
  /// /compute_models/ARCH/kernels/GROUP): the parameters by name, each rounded to
  /// kSignificantDigits, and its sources (the residual rounded likewise). Nothing else of the
  /// file changes; a "kernels" object that does not exist yet goes before the model's "sources".
  /// InputError when no models file has that architecture's compute model.
  void set_kernel_group(const std::string& architecture, const std::string& group,
                        const std::vector<std::pair<std::string, double>>& values, const KernelConstantSources& sources);

  /// The catalog these documents describe now.
  Catalog catalog() const;
  /// (path, text) of every file whose text differs from what was read.
  std::vector<std::pair<std::string, std::string>> changed_files() const;

  static constexpr int kSignificantDigits = 4;

 private:
  ModelSet();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `value` rounded to `digits` significant digits, written without an exponent ("0.7737", "9.561").
std::string significant_text(double value, int digits);

}  // namespace topsim
